import csv
import json

import pytest

from app.commands.bench import HEADER
from app.main import main
from core.bench_device import cuda_available

SMALL = ["--lengths", "64", "128", "--heads", "2", "--head-dim", "16", "--repeats", "3"]


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
    assert "not available: core.flash computes in float64 only" in text
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


def test_cuda_without_a_gpu_says_so(capsys):
    if cuda_available():
        pytest.skip("a GPU is present")
    assert main(["bench", "--device", "cuda"]) == 2
    assert "CUDA was requested" in capsys.readouterr().err


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
