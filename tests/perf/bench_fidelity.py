"""Does the benchmark report the same time as torch.utils.benchmark? And how do the slopes look?

Run from the repository root:  python -m tests.perf.bench_fidelity
Prints medians measured side by side in one run; asserts nothing about speed.
"""

from __future__ import annotations

import time

import numpy as np


def fidelity(impl: str, n: int, rounds: int = 5) -> None:
    """The app's median vs torch.utils.benchmark's median for the same prepared call."""
    import torch
    from torch.utils import benchmark

    from core.bench.runners import IMPLEMENTATIONS, Problem
    from core.bench.sweep import BenchConfig, run_benchmark

    cfg = BenchConfig(lengths=(n,), impls=(impl,), heads=8, head_dim=64, repeats=30, budget_s=3)
    q, k, v = np.random.default_rng(0).standard_normal((3, 1, 8, n, 64), dtype=np.float32)
    call = IMPLEMENTATIONS[impl].prepare(Problem(q, k, v, "fp32", "cpu", False, None))
    timer = benchmark.Timer(stmt="call()", globals={"call": call}, num_threads=torch.get_num_threads())
    ratios = []
    for i in range(rounds):  # alternate the two so drift on a shared machine hits both
        (app,) = run_benchmark(cfg).results
        reference = timer.blocked_autorange(min_run_time=2.0).median
        ratios.append(app.median_s / reference)
        print(
            f"{impl:12s} n={n:5d} round {i + 1}: app {app.median_s * 1e3:8.3f} ms, "
            f"torch.utils.benchmark {reference * 1e3:8.3f} ms, ratio {ratios[-1]:.3f}"
        )
    print(f"{impl:12s} median ratio app / torch.utils.benchmark: {np.median(ratios):.3f}")


def slopes() -> None:
    """Time and memory slopes of the numpy and torch implementations on this CPU."""
    from core.bench.sweep import BenchConfig, fastest_summary, fit_slopes, run_benchmark

    impls = ("numpy-naive", "numpy-tiled", "torch-naive", "sdpa-math", "sdpa-flash")
    cfg = BenchConfig(lengths=(512, 1024, 2048, 4096), impls=impls, heads=4, dtype="fp64")
    report = run_benchmark(cfg)
    for r in report.results:
        shown = f"{r.median_s * 1e3:9.2f} ms {r.peak_bytes / 1e6:8.1f} MB" if r.ok else r.status
        print(f"{r.impl:12s} n={r.n:5d} {shown}")
    time_fit = fit_slopes(report.results, "median_s")
    memory_fit = fit_slopes(report.results, "peak_bytes")
    for impl in impls:
        print(f"{impl:12s} slope of time {time_fit.get(impl, float('nan')):.2f}, "
              f"of memory {memory_fit.get(impl, float('nan')):.2f}")  # fmt: skip
    print(fastest_summary(report.results))


def flex_compile() -> None:
    """The compiled FlexAttention path on the CPU: compile time and the first windowed sweep."""
    from core.bench.sweep import BenchConfig, run_benchmark

    cfg = BenchConfig(lengths=(1024, 4096), impls=("flex-window", "sdpa-flash"), window=256)
    started = time.perf_counter()
    for r in run_benchmark(cfg).results:
        compile_s = f", first call {r.compile_s:.1f} s" if r.compile_s is not None else ""
        print(f"{r.impl:12s} n={r.n:5d} {r.status} {r.median_s * 1e3:8.2f} ms "
              f"error {r.max_abs_error:.1e}{compile_s}")  # fmt: skip
    print(f"flex sweep took {time.perf_counter() - started:.1f} s")


if __name__ == "__main__":
    fidelity("sdpa-flash", 1024)
    fidelity("torch-naive", 1024)
    slopes()
    flex_compile()
