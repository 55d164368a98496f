import csv
import importlib.util
import json
import re
import subprocess
import sys
from dataclasses import replace
from pathlib import Path
from types import SimpleNamespace

import pytest

from app.commands.bench import HEADER
from app.main import main
from core.bench import sweep as bench
from core.bench.device import cuda_available
from tests.waits import patience

SMALL = ["--lengths", "64", "128", "--heads", "2", "--head-dim", "16", "--repeats", "3"]


@pytest.mark.models
def test_bench_prints_a_table_and_writes_json_and_csv(tmp_path, capsys):
    out_json, out_csv = tmp_path / "bench.json", tmp_path / "bench.csv"
    impls = ["--impl", "numpy-naive", "numpy-tiled", "torch-naive", "sdpa-flash"]
    rc = main(["bench", *SMALL, *impls, "--json", str(out_json), "--csv", str(out_csv)])
    text = capsys.readouterr().out
    assert rc == 0
    lines = text.splitlines()
    assert HEADER in lines
    rows = [line.split() for line in lines[lines.index(HEADER) + 1 :][:8]]
    assert [(r[0], int(r[1])) for r in rows] == [
        (impl, n) for n in (64, 128) for impl in ("numpy-naive", "numpy-tiled", "torch-naive", "sdpa-flash")
    ]
    assert "not available: core.maths.flash computes in float64 only" in text
    assert any(line.startswith("Fastest — n=64: ") for line in lines)
    data = json.loads(out_json.read_text())
    assert data["device"]["kind"] == "cpu"
    results = data["results"]
    assert len(results) == 8
    ok = [r for r in results if r["status"] == "ok"]
    assert len(ok) == 6 and all(r["max_abs_error"] < 1e-5 for r in ok)
    for r in ok:  # the table shows the same numbers as the file
        assert f"{r['median_s'] * 1e3:10.3f}".strip() in text
    table = list(csv.DictReader(out_csv.open()))
    assert [row["impl"] for row in table] == [r["impl"] for r in results]
    assert set(table[0]) >= {"impl", "device", "dtype", "n", "median_s", "tflops", "peak_bytes", "status"}


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--lengths", "0"], "must be a whole number from 1 to 1,048,576; 0 is out of range"),
        (["--lengths", "12x"], "“12x” is not one"),
        (["--dtype", "fp8"], "dtype must be one of fp32, fp16, bf16, fp64"),
        (["--impl", "sdpa-cudnn"], "sdpa-cudnn cannot run on cpu"),
        (["--heads", "0"], "--heads must be a whole number from 1 to 1,024"),
        (
            ["--impl", "numpy-naive", "--json", "/no/such/folder/x.json"],
            "the folder /no/such/folder does not exist",
        ),
    ],
)
def test_bad_input_is_one_clear_message(args, message, capsys):
    try:
        rc = main(["bench", *args])
    except SystemExit as exit_info:  # argparse refuses before the command runs
        rc = exit_info.code
    err = capsys.readouterr().err
    assert rc == 2
    assert message in err and "Traceback" not in err


def test_default_set_leaves_out_what_cannot_run_and_says_why(capsys, monkeypatch):
    from core.bench import sweep as bench

    verdicts = bench.runnable_impls("cpu", "fp32", 16)
    assert verdicts["numpy-tiled"] == "core.maths.flash computes in float64 only; choose fp64"
    assert verdicts["numpy-naive"] is None and bench.runnable_impls("cpu", "fp64", 16)["numpy-tiled"] is None
    # The CLI's default set, on a device that has only the numpy implementations (no compiling here).
    monkeypatch.setattr(bench, "available_impls", lambda device: ("numpy-naive", "numpy-tiled"))
    assert not sys.stderr.isatty()  # stage lines show when piped too (a log, CI)
    assert main(["bench", "--lengths", "32", "--heads", "1", "--head-dim", "8", "--repeats", "3"]) == 0
    captured = capsys.readouterr()
    assert "left out: numpy-tiled (core.maths.flash computes in float64 only; choose fp64)" in captured.out
    assert "numpy-naive" in captured.out and "not available" not in captured.out
    assert captured.err == "finding the implementations that run at these settings…\n"


def test_slopes_need_three_lengths(capsys):
    small = ["--heads", "1", "--head-dim", "8", "--repeats", "3", "--impl", "numpy-naive"]
    assert main(["bench", "--lengths", "64", "128", *small]) == 0
    out = capsys.readouterr().out
    assert "not meaningful from fewer than 3 lengths" in out and "log-log slope of time" not in out
    assert main(["bench", "--lengths", "64", "128", "256", *small]) == 0
    out = capsys.readouterr().out
    assert "log-log slope of time vs n: numpy-naive" in out and "not meaningful" not in out


def test_help_gives_each_size_a_description_and_default(capsys):
    with pytest.raises(SystemExit):
        main(["bench", "--help"])
    text = " ".join(capsys.readouterr().out.split())
    for flag, default in (
        ("--device", "cpu"),
        ("--batch", 1),
        ("--heads", 8),
        ("--head-dim", 64),
        ("--repeats", 10),
    ):
        assert re.search(rf"{flag} \S+ [^-]+\(default: {default}\)", text), flag


def test_cuda_without_a_gpu_says_so(capsys):
    if cuda_available():
        pytest.skip("a GPU is present")
    assert main(["bench", "--device", "cuda"]) == 2
    torch = importlib.util.find_spec("torch") is not None
    assert ("CUDA was requested" if torch else "CUDA needs torch") in capsys.readouterr().err


@pytest.mark.skipif(not cuda_available(), reason="needs a CUDA GPU")
def test_cuda_sweep_from_the_command_line(tmp_path, capsys):
    out_json = tmp_path / "gpu.json"
    rc = main(["bench", "--device", "cuda", "--lengths", "256", "512", "--causal", "--json", str(out_json)])
    assert rc == 0
    data = json.loads(out_json.read_text())
    assert data["device"]["kind"] == "cuda" and data["device"]["dtype"] == "bf16"
    for r in data["results"]:
        assert r["status"] == "ok" or r["status"].startswith("not available: "), r
    assert {r["impl"] for r in data["results"] if r["status"] == "ok"} >= {"torch-naive", "sdpa-math"}


FAST, SLOW = 0.0005, 0.064  # seconds per call, as sdpa-math at n = 128 read and should have


class FakeClock:
    """core.bench.sweep's clock, moved on only by the calls it times (``first`` durations, then FAST):
    no real timing in the test."""

    def __init__(self, first: list[float]):
        self.now, self.calls, self.first = 0.0, 0, first

    def perf_counter(self) -> float:
        return self.now

    def call(self) -> None:
        self.now += self.first[self.calls] if self.calls < len(self.first) else FAST
        self.calls += 1


@pytest.mark.parametrize(
    "first",
    [[SLOW] * 3, [FAST] + [SLOW] * 10],  # longer than one warm-up call; a stall after a fast call
    ids=["stall-at-start", "stall-after-a-fast-call"],
)
def test_warm_up_outlasts_a_stall_before_timing(monkeypatch, first):
    """The first calls after another implementation can stall (64 ms each, where the point takes
    0.5 ms): they go to the warm-up, not into the median."""
    clock = FakeClock(first)
    monkeypatch.setattr(bench, "time", SimpleNamespace(perf_counter=clock.perf_counter))
    config = bench.BenchConfig(lengths=(128,), impls=("numpy-naive",), repeats=5)
    times = bench._time_calls(clock.call, config, lambda: None)
    assert times == [pytest.approx(FAST)] * 5


def test_no_warm_up_when_warmup_is_0(monkeypatch):
    clock = FakeClock([])
    monkeypatch.setattr(bench, "time", SimpleNamespace(perf_counter=clock.perf_counter))
    config = bench.BenchConfig(lengths=(128,), impls=("numpy-naive",), repeats=4, warmup=0)
    assert len(bench._time_calls(clock.call, config, lambda: None)) == clock.calls == 4


def test_compiling_is_announced_when_piped(capsys, monkeypatch):
    impl = bench.IMPLEMENTATIONS["numpy-naive"]
    monkeypatch.setitem(bench.IMPLEMENTATIONS, "numpy-naive", replace(impl, compiles=True))
    tiny = ["--lengths", "8", "16", "--heads", "1", "--head-dim", "8", "--repeats", "1"]
    assert main(["bench", "--impl", "numpy-naive", *tiny]) == 0
    err = capsys.readouterr().err.splitlines()
    for n in (8, 16):
        assert f"numpy-naive, n = {n}: compiling its kernel on the first call (can take a minute)…" in err


def test_torch_cuda_toolkit_warning_stays_off_stderr():
    """torch's CUDA build on a computer with a CUDA toolkit and no GPU logs "No CUDA runtime is
    found" when FlexAttention's compiler imports torch.utils.cpp_extension; importing torch resets
    the "torch" logger, so the quieting must outlast that import."""
    pytest.importorskip("torch")
    code = (
        "from app.main import main\n"
        "main(['bench', '--impl', 'torch-naive', '--lengths', '8', '--heads', '1', '--repeats', '1'])\n"
        "import torch.utils.cpp_extension as ext\n"
        "ext.logger.warning(\"No CUDA runtime is found, using CUDA_HOME='/usr/local/cuda'\")\n"
        "ext.logger.error('an error still shows')\n"
    )
    root = Path(__file__).resolve().parents[2]
    out = subprocess.run(
        [sys.executable, "-c", code], cwd=root, capture_output=True, text=True, timeout=patience(300)
    )
    assert out.returncode == 0, out.stderr
    assert "No CUDA runtime" not in out.stderr and "an error still shows" in out.stderr
