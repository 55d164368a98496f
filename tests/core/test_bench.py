import csv
import io
import json
import os
import sys
import threading
import time
from dataclasses import replace

import numpy as np
import pytest

import core.bench.sweep as bench
from core.bench.device import cuda_available
from core.bench.runners import IMPLEMENTATIONS, Problem, Refused, linear_flops, prepare_flex
from core.bench.sweep import (
    BenchConfig,
    BenchResult,
    attention_flops,
    available_impls,
    fastest_summary,
    fit_slopes,
    implementation_choices,
    run_benchmark,
)
from core.maths.attention import attend
from core.maths.linear import elu_plus_one, parallel
from core.maths.masks import causal, sliding_window
from tests.waits import patience

TOLERANCE = {"fp64": 1e-10, "fp32": 2e-5, "fp16": 1e-2, "bf16": 6e-2}
QUICK = {"warmup": 0, "repeats": 3, "budget_s": 0.05}
CPU_DENSE = ("numpy-naive", "numpy-tiled", "torch-naive", "sdpa-math", "sdpa-flash")


def make_problem(dtype, causal_=False, window=None, shape=(2, 2, 70, 16), device="cpu"):
    q, k, v = np.random.default_rng(1).standard_normal((3, *shape), dtype=np.float32)
    return Problem(q, k, v, dtype, device, causal_, window)


def expected_output(problem):
    """float64 attention of every head through core.maths.attention.attend. (B, H, n, d)"""
    batch, heads, n, _ = problem.shape
    if problem.window is not None:
        mask = sliding_window(n, problem.window, causal=problem.causal)
    else:
        mask = causal(n) if problem.causal else None
    out = np.empty(problem.shape)
    for b in range(batch):
        for h in range(heads):
            q, k, v = (bench._rounded(x[b, h], problem.dtype) for x in (problem.q, problem.k, problem.v))
            out[b, h] = attend(q, k, v, mask=mask).output
    return out


def as_numpy(out):
    return out.double().cpu().numpy() if hasattr(out, "cpu") else np.asarray(out, np.float64)


@pytest.mark.parametrize("causal_", [False, True])
@pytest.mark.parametrize("dtype", ["fp64", "fp32", "fp16", "bf16"])
def test_every_cpu_implementation_matches_attend(dtype, causal_):
    pytest.importorskip("torch")
    problem = make_problem(dtype, causal_)
    expected = expected_output(problem)
    ran = 0
    for key in CPU_DENSE:
        try:
            call = IMPLEMENTATIONS[key].prepare(problem)
        except Refused:
            continue
        got = as_numpy(call())
        assert got.shape == problem.shape
        np.testing.assert_allclose(got, expected, rtol=0, atol=TOLERANCE[dtype], err_msg=key)
        ran += 1
    assert ran >= 3  # torch naive and both SDPA CPU backends take every dtype


@pytest.mark.filterwarnings("ignore:flex_attention called without torch.compile")
@pytest.mark.parametrize("causal_", [False, True])
def test_flex_sliding_window_matches_the_window_mask(causal_):
    pytest.importorskip("torch")
    problem = make_problem("fp32", causal_, window=9)
    got = as_numpy(prepare_flex(problem, compiled=False)())
    np.testing.assert_allclose(got, expected_output(problem), rtol=0, atol=TOLERANCE["fp32"])


@pytest.mark.parametrize("causal_", [False, True])
def test_chunked_linear_attention_matches_cores_parallel_form(causal_):
    """150 tokens: two whole chunks of 64 and a part; every head against core.maths.linear."""
    pytest.importorskip("torch")
    problem = make_problem("fp64", causal_, shape=(2, 3, 150, 16))
    got = as_numpy(IMPLEMENTATIONS["linear"].prepare(replace(problem, linear=True))())
    for b, h in np.ndindex(2, 3):
        q, k, v = (x[b, h].astype(np.float64) for x in (problem.q, problem.k, problem.v))
        expected = parallel(elu_plus_one(q), elu_plus_one(k), v, causal=causal_)
        np.testing.assert_allclose(got[b, h], expected, rtol=0, atol=1e-12)


def test_a_sweep_checks_linear_attention_against_its_own_reference_and_says_where_it_wins():
    pytest.importorskip("torch")
    cfg = BenchConfig(lengths=(64, 200), impls=("linear",), heads=2, head_dim=16, causal=True, **QUICK)
    report = run_benchmark(cfg, np.random.default_rng(0))
    assert all(r.ok and r.max_abs_error < 1e-5 for r in report.results)
    assert report.results[1].tflops == pytest.approx(
        linear_flops(1, 2, 200, 16, True) / report.results[1].median_s / 1e12
    )
    slow = [fake("sdpa-flash", n, t, 1) for n, t in ((256, 1.0), (512, 2.0), (1024, 3.0))]
    linear = [fake("linear", n, t, 1) for n, t in ((256, 1.5), (512, 1.5), (1024, 1.5))]
    assert fastest_summary(slow + linear).endswith(
        "Linear attention is the fastest from n=512 on (at n=256 sdpa-flash was faster)."
    )
    assert "beat no softmax implementation" in fastest_summary([*slow, fake("linear", 1024, 9.0, 1)])


def test_sweep_reports_errors_within_tolerance_and_consistent_numbers():
    pytest.importorskip("torch")
    cfg = BenchConfig(lengths=(64, 100), impls=CPU_DENSE, batch=2, heads=2, head_dim=16, **QUICK)
    seen = []
    report = run_benchmark(cfg, np.random.default_rng(3), on_point=seen.append)
    assert [(r.n, r.impl) for r in report.results] == cfg.points()
    assert list(report.results) == seen
    by = {(r.n, r.impl): r for r in report.results}
    assert (
        by[64, "numpy-tiled"].status
        == "not available: core.maths.flash computes in float64 only; choose fp64"
    )
    for r in report.results:
        if r.impl == "numpy-tiled":
            continue
        assert r.ok, r.status
        assert r.max_abs_error < TOLERANCE["fp32"]
        assert r.repeats == 3
        assert r.tflops == pytest.approx(4 * 2 * 2 * r.n**2 * 16 / r.median_s / 1e12)
        assert r.peak_bytes is not None and r.peak_bytes >= 0
    assert report.device.kind == "cpu" and report.device.memory_bytes > 0


def rss_slack() -> int:
    """How far a resident-set reading can be off: Linux counts pages in batches of up to 64 per
    thread (per CPU since 6.2)."""
    return 64 * 4096 * (os.cpu_count() or 1)


def assert_a_reading_in(read, low: int, high: int, tries: int = 3) -> None:
    """One of ``tries`` peak readings lies in [low, high).

    The resident set is the whole process's: a thread that an earlier test left running can free
    memory during a reading and hide a buffer, so one short reading does not fail; a flaw in the
    measurement itself is short every time.
    """
    seen = []
    for _ in range(tries):
        peak = read()
        if peak is None:
            pytest.skip("the resident-set high-water mark is read on Linux only")
        if low <= peak < high:
            return
        seen.append(peak)
    pytest.fail(f"peak readings {seen} all outside [{low}, {high})")


def test_numpy_naive_peak_memory_covers_the_score_matrix():
    cfg = BenchConfig(lengths=(512,), impls=("numpy-naive",), heads=4, dtype="fp64", **QUICK)
    scores = 4 * 512 * 512 * 8
    assert_a_reading_in(lambda: run_benchmark(cfg).results[0].peak_bytes, scores - rss_slack(), 2 * scores)


def test_torch_cpu_peak_memory_counts_both_score_buffers():
    """torch-naive holds the scores and the softmax weights at once: at least 2 score matrices.

    Whether one more score-sized temporary is live at the peak is up to torch's kernels: at 512
    tokens, readings alternate between about 2.1 and 3.07 score matrices from run to run (torch
    2.13 here; the issue saw both with 2.14), so 3 matrices plus the output is the honest upper
    bound. The reading is the growth of the resident set: the bounds allow its batching either
    way, and 1024 tokens (4 MiB per head) keep that a few percent of the scores.
    """
    pytest.importorskip("torch")
    n, heads = 1024, 2
    cfg = BenchConfig(lengths=(n,), impls=("numpy-naive", "torch-naive"), heads=heads, **QUICK)
    numpy_run, torch_run = run_benchmark(cfg).results  # numpy's freed buffers come first
    if torch_run.peak_bytes is None:
        pytest.skip("the resident-set high-water mark is read on Linux only")
    scores, out = heads * n * n * 4, heads * n * 64 * 4  # fp32
    slack = rss_slack()
    assert 2 * scores - slack <= torch_run.peak_bytes <= 3 * scores + out + slack
    assert scores - slack <= numpy_run.peak_bytes < 2 * scores


def test_the_first_point_in_a_fresh_thread_counts_its_scores():
    """The app sweeps in a worker thread; its first reading once missed the score matrix (the
    timed calls before it had raised glibc's mmap threshold)."""
    cfg = BenchConfig(lengths=(512,), impls=("numpy-naive",), heads=2, head_dim=16, repeats=3)

    def first_reading_in_a_fresh_thread():
        found = []
        thread = threading.Thread(target=lambda: found.extend(run_benchmark(cfg).results))
        thread.start()
        thread.join(patience(120))
        (r,) = found
        return r.peak_bytes

    scores = 2 * 512 * 512 * 4
    assert_a_reading_in(first_reading_in_a_fresh_thread, scores - rss_slack(), 2 * scores)


def test_measuring_memory_leaves_other_threads_numpy_alone():
    """A benchmark in one thread while another computes with numpy, as the app's UI thread does
    while it draws. Measuring with tracemalloc crashed this at once (CPython gh-128679)."""
    cfg = BenchConfig(lengths=(64, 128), impls=("numpy-naive",), heads=2, head_dim=16, warmup=0, repeats=1)
    stop = threading.Event()

    def sweeps() -> None:
        while not stop.is_set():
            run_benchmark(cfg)

    thread = threading.Thread(target=sweeps)
    thread.start()
    seen, ticks = np.arange(0.0, 50.0, 0.5), np.arange(0.0, 50.0, 0.1)
    deadline = time.monotonic() + 2.0
    try:
        while time.monotonic() < deadline:  # how pyqtgraph's axes drop ticks already drawn
            np.isclose(seen, ticks[:, np.newaxis], rtol=0, atol=1e-3)
    finally:
        stop.set()
        thread.join(patience(60))
    assert not thread.is_alive()


def test_numpy_tiled_runs_in_fp64_and_agrees():
    cfg = BenchConfig(lengths=(200,), impls=("numpy-tiled",), heads=2, causal=True, dtype="fp64", **QUICK)
    (r,) = run_benchmark(cfg).results
    assert r.ok and r.max_abs_error < 1e-10
    assert r.tflops == pytest.approx(4 * 2 * 200 * 200 / 2 * 64 / r.median_s / 1e12)


def test_refused_backend_is_reported_with_torchs_reason():
    pytest.importorskip("torch")
    prepare = IMPLEMENTATIONS["sdpa-efficient"].prepare
    with pytest.raises(Refused, match="No viable backend"):
        prepare(make_problem("fp32"))


def test_unsupported_dtype_is_a_not_available_row_not_an_error():
    cfg = BenchConfig(lengths=(64,), impls=("numpy-naive",), dtype="bf16", **QUICK)
    (r,) = run_benchmark(cfg).results
    assert r.status == "not available: numpy has no bfloat16 type"
    assert r.median_s is None and r.tflops is None


def test_memory_gating_skips_before_running(monkeypatch):
    monkeypatch.setattr(bench, "free_bytes", lambda kind: 10**9)
    cfg = BenchConfig(lengths=(64, 8192), impls=("numpy-naive",), heads=8, dtype="fp64", **QUICK)
    first, second = run_benchmark(cfg).results
    assert first.ok
    # 8 heads × 8192² × 8 bytes of scores alone is 4.3 GB
    assert second.status.startswith("skipped: would need 4.")
    assert second.status.endswith(", 1.00 GB free")
    assert second.median_s is None


def test_time_gating_uses_the_previous_length():
    cfg = BenchConfig(lengths=(64, 4096), impls=("numpy-naive",), time_limit_s=1e-3, warmup=0, repeats=3)
    first, second = run_benchmark(cfg).results
    assert first.ok
    assert second.status.startswith("skipped: would take about")


def test_a_call_cancel_cannot_interrupt_is_kept_short():
    cfg = BenchConfig(lengths=(64, 4096), impls=("numpy-naive",), call_limit_s=1e-3, warmup=0, repeats=3)
    first, second = run_benchmark(cfg).results
    assert first.ok
    assert second.status.startswith("skipped: one call would take about")


@pytest.mark.parametrize("shape", [dict(lengths=(8192,)), dict(lengths=(256,), batch=16, heads=64)])
def test_a_sweep_that_starts_big_is_predicted_from_a_short_call(shape):
    cfg = BenchConfig(impls=("numpy-naive",), call_limit_s=1e-3, warmup=0, repeats=3, **shape)
    (only,) = run_benchmark(cfg).results
    assert only.status.startswith("skipped: one call would take about")
    assert only.median_s is None


def test_a_small_first_point_runs_without_calibration():
    cfg = BenchConfig(lengths=(64,), impls=("numpy-naive",), call_limit_s=1e-3, warmup=0, repeats=3)
    assert run_benchmark(cfg).results[0].ok


def test_progress_that_raises_cancels_within_a_point():
    calls, results = [], []

    class Cancelled(Exception):
        pass

    def progress(done, total):
        calls.append((done, total))
        if done == 1 and len(calls) > 3:  # inside the second point
            raise Cancelled

    cfg = BenchConfig(lengths=(64, 128), impls=("numpy-naive",), warmup=0, repeats=5)
    with pytest.raises(Cancelled):
        run_benchmark(cfg, progress=progress, on_point=results.append)
    assert calls[0] == (0, 2)
    assert len(results) == 1 and results[0].n == 64
    assert calls[-1] == (1, 2)


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"lengths": (0,)}, "Each sequence length must be a whole number of at least 1, got 0"),
        ({"lengths": (128, -5)}, "got -5"),
        ({"lengths": (1.5,)}, "got 1.5"),
        ({"lengths": ()}, "at least one sequence length"),
        ({"dtype": "fp8"}, "dtype must be one of fp32, fp16, bf16, fp64"),
        ({"device": "tpu"}, "Device must be one of cpu, cuda"),
        ({"impls": ("magic",)}, "Unknown implementation 'magic'"),
        ({"impls": ("sdpa-cudnn",)}, "sdpa-cudnn cannot run on cpu"),
        ({"heads": 0}, "heads must be a whole number of at least 1"),
        ({"budget_s": float("nan")}, "budget_s must be a positive number"),
    ],
)
def test_bad_configuration_explains_itself(kwargs, message):
    with pytest.raises(ValueError, match=message.replace("(", r"\(")):
        BenchConfig(**kwargs)


def test_cuda_without_a_gpu_is_a_clear_error():
    torch = pytest.importorskip("torch")
    if torch.cuda.is_available():
        pytest.skip("a GPU is present")
    with pytest.raises(ValueError, match="CUDA was requested"):
        BenchConfig(device="cuda")


def test_numpy_implementations_work_without_torch(monkeypatch):
    monkeypatch.setitem(sys.modules, "torch", None)  # makes `import torch` fail
    assert available_impls("cpu") == ("numpy-naive", "numpy-tiled")
    cfg = BenchConfig(lengths=(64,), dtype="fp64", **QUICK)
    report = run_benchmark(cfg)
    assert [r.status for r in report.results] == ["ok", "ok"]
    assert report.device.torch_version is None


def test_flops_follow_the_flashattention_convention():
    assert attention_flops(2, 3, 128, 64, causal=False) == 4 * 2 * 3 * 128**2 * 64
    assert attention_flops(2, 3, 128, 64, causal=True) == 2 * 2 * 3 * 128**2 * 64
    for causal_ in (False, True):
        cells = int(sliding_window(50, 7, causal=causal_).sum())
        assert attention_flops(1, 2, 50, 8, causal_, window=7) == 4 * 2 * 8 * cells


def fake(impl, n, median_s, peak_bytes, status="ok"):
    """A result timed in five calls that spread 2 % (a settled point)."""
    return BenchResult(impl, "cpu", "fp32", n, 1, 1, 64, False, median_s, 1.0, peak_bytes, 0.0, status,
                       repeats=5, spread=0.02)  # fmt: skip


def test_slopes_and_summary():
    results = [fake("torch-naive", n, 1e-9 * n**2, 4 * n**2) for n in (128, 256, 512)]
    results += [fake("sdpa-flash", n, 1e-10 * n**2, 100 * n) for n in (128, 256, 512)]
    results.append(fake("numpy-naive", 1024, None, None, "skipped: would need 9 GB, 1 GB free"))
    assert fit_slopes(results, "median_s") == pytest.approx({"torch-naive": 2, "sdpa-flash": 2})
    assert fit_slopes(results, "peak_bytes") == pytest.approx({"torch-naive": 2, "sdpa-flash": 1})
    assert fastest_summary(results) == (
        "Fastest — n=128: sdpa-flash (10.0× torch-naive); n=256: sdpa-flash (10.0× torch-naive); "
        "n=512: sdpa-flash (10.0× torch-naive); n=1024: nothing ran"
    )


def test_json_and_csv_exports_hold_every_result():
    cfg = BenchConfig(lengths=(64,), impls=("numpy-naive", "numpy-tiled"), dtype="fp32", **QUICK)
    report = run_benchmark(cfg)
    data = json.loads(report.to_json())
    assert set(data) == {"device", "results"}
    assert data["device"]["kind"] == "cpu"
    required = {"impl", "device", "dtype", "n", "batch", "heads", "head_dim", "causal"}
    required |= {"median_s", "tflops", "peak_bytes", "max_abs_error", "status"}
    assert required <= set(data["results"][0])
    assert [r["status"][:13] for r in data["results"]] == ["ok", "not available"]
    rows = list(csv.DictReader(io.StringIO(report.to_csv())))
    assert [r["impl"] for r in rows] == ["numpy-naive", "numpy-tiled"]
    assert float(rows[0]["median_s"]) == report.results[0].median_s
    assert rows[1]["median_s"] == ""


requires_cuda = pytest.mark.skipif(not cuda_available(), reason="needs a CUDA GPU")


@requires_cuda
@pytest.mark.parametrize("dtype", ["bf16", "fp16", "fp32"])
def test_every_cuda_implementation_matches_attend(dtype):
    gpu_keys = [k for k in available_impls("cuda") if IMPLEMENTATIONS[k].library == "torch"]
    for causal_ in (False, True):
        for window in (None, 40):
            problem = make_problem(dtype, causal_, window, shape=(2, 2, 200, 64), device="cuda")
            expected = expected_output(problem)
            for key in gpu_keys:
                if IMPLEMENTATIONS[key].linear or IMPLEMENTATIONS[key].windowed != (window is not None):
                    continue  # linear attention is another function: its own test below
                try:
                    call = IMPLEMENTATIONS[key].prepare(problem)
                except Refused as refusal:
                    assert str(refusal), key
                    continue
                got = as_numpy(call())
                np.testing.assert_allclose(got, expected, rtol=0, atol=TOLERANCE[dtype], err_msg=key)


@requires_cuda
@pytest.mark.parametrize("dtype", ["bf16", "fp32"])
def test_cuda_sweep_runs_each_backend_or_says_why(dtype):
    cfg = BenchConfig(lengths=(128, 256), device="cuda", dtype=dtype, causal=True, window=64, **QUICK)
    assert "numpy-naive" not in cfg.impls and "sdpa-efficient" in cfg.impls
    report = run_benchmark(cfg)
    assert report.device.kind == "cuda" and report.device.name
    for r in report.results:
        assert r.ok or r.status.startswith("not available: "), (r.impl, r.status)
        if r.ok:
            assert r.max_abs_error < TOLERANCE[dtype], r.impl
            assert r.peak_bytes > 0
    ran = {r.impl for r in report.results if r.ok}
    assert {"torch-naive", "sdpa-math"} <= ran
    if dtype == "bf16":
        assert {"sdpa-flash", "sdpa-efficient"} & ran


def test_implementation_choices_say_why_a_backend_is_missing():
    pytest.importorskip("torch")
    choices = implementation_choices()
    assert list(choices["cpu"]) == list(IMPLEMENTATIONS)
    assert choices["cpu"]["sdpa-flash"] is None
    assert choices["cpu"]["sdpa-cudnn"] == "SDPA CUDNN_ATTENTION has no CPU kernel"
    assert ("cuda" in choices) == cuda_available()
