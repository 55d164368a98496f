"""The Benchmark panel's sweep as a state (which implementations ran, and every result so far)
and what the plots and the table show of it, Qt-free.

    summary = summarise(SweepState(("numpy-naive",), results))
    summary.points["median_s"]["numpy-naive"]   # ([n, ...], [seconds, ...]) of the points that ran
"""

from __future__ import annotations

from dataclasses import dataclass

from core.bench.device import describe_device
from core.bench.sweep import (
    MEANINGFUL_SLOPE_LENGTHS,
    ONE_CALL,
    BenchConfig,
    BenchReport,
    BenchResult,
    fastest_summary,
    fit_slopes,
    implementation_choices,
    run_benchmark,
    withheld_slopes,
)

COLUMNS = ("implementation", "n", "median ms", "TFLOP/s", "peak MB", "max error", "status")
# (name, BenchResult field, axis label, unit, slope shown in the legend)
PLOTS = (
    ("Time", "median_s", "median time", "s", True),
    ("Throughput", "tflops", "achieved TFLOP/s", "", False),
    ("Memory", "peak_bytes", "peak memory beyond the inputs", "B", True),
)


def probe() -> tuple[dict[str, dict[str, str | None]], dict[str, str]]:
    """Which implementations each device has (or why not), and a one-line description per device."""
    choices = implementation_choices()
    names = {}
    for device in choices:
        info = describe_device(device, "fp32")
        memory = f", {info.memory_bytes / 2**30:.0f} GiB" if info.memory_bytes else ""
        names[device] = f"{info.name}{memory}"
    return choices, names


def row_texts(r: BenchResult) -> list[str]:
    """The table cells of one result, in COLUMNS order."""
    if not r.ok:
        return [r.impl, str(r.n), "", "", "", "", r.status]
    peak = f"{r.peak_bytes / 1e6:.1f}" if r.peak_bytes is not None else "?"
    status = "ok" if r.tflops_pct is None else f"ok, {r.tflops_pct:.0f}% of peak"
    if r.compile_s is not None:
        status += f", first call {r.compile_s:.1f} s"
    return [
        r.impl,
        str(r.n),
        f"{r.median_s * 1e3:.3f}",
        f"{r.tflops:.3g}",
        peak,
        f"{r.max_abs_error:.1e}",
        status,
    ]


@dataclass(frozen=True)
class SweepState:
    impls: tuple[str, ...] = ()  # the implementations of the sweep, in the legend's order
    results: tuple[BenchResult, ...] = ()  # every point measured so far


@dataclass(frozen=True)
class SweepSummary:
    impls: tuple[str, ...]
    points: dict[str, dict[str, tuple[list[int], list[float]]]]  # field -> impl -> (n, value), value > 0
    # field -> impl -> log-log slope (fields with a slope only; impls with enough lengths only)
    slopes: dict[str, dict[str, float]]
    withheld: dict[str, dict[str, str]]  # field -> impl -> why its slope is not given (a noisy point)
    summary: str  # the fastest implementation per n


def summarise(s: SweepState) -> SweepSummary:
    points: dict[str, dict[str, tuple[list[int], list[float]]]] = {}
    slopes: dict[str, dict[str, float]] = {}
    withheld: dict[str, dict[str, str]] = {}
    for _, field, _, _, with_slope in PLOTS:
        points[field] = {}
        for impl in s.impls:
            mine = sorted((r for r in s.results if r.impl == impl and r.ok), key=lambda r: r.n)
            kept = [(r.n, getattr(r, field)) for r in mine if getattr(r, field)]  # log axes: > 0 only
            points[field][impl] = ([n for n, _ in kept], [v for _, v in kept])
        if with_slope:
            slopes[field] = fit_slopes(s.results, field, MEANINGFUL_SLOPE_LENGTHS)
            withheld[field] = withheld_slopes(s.results, field, MEANINGFUL_SLOPE_LENGTHS)
    summary = fastest_summary(s.results) if s.results else "Run a sweep to fill the table and the plots."
    return SweepSummary(s.impls, points, slopes, withheld, summary)


def legend_text(s: SweepSummary, field: str, impl: str) -> str:
    """``impl`` as the legend of ``field``'s plot names it: with its log-log slope when the plot
    shows slopes and ``impl`` ran at MEANINGFUL_SLOPE_LENGTHS lengths or more, else saying so."""
    slopes = s.slopes.get(field)
    if slopes is None or not s.points[field].get(impl, ([], []))[0]:
        return impl
    if impl in slopes:
        return f"{impl}  slope {slopes[impl]:.2f}"
    why = s.withheld.get(field, {}).get(impl)
    if why is not None:
        if ONE_CALL in why:
            return f"{impl}  (no slope: a point was timed once; set Repeats to 2 or more)"
        return f"{impl}  (no slope: a point's timing is noise; run it again)"
    return f"{impl}  (slope needs {MEANINGFUL_SLOPE_LENGTHS} lengths)"


@dataclass(frozen=True)
class ProbeState:
    """Nothing to choose: applying it looks again for torch, its kernels and a GPU."""


def compute_probe(_s: ProbeState, progress=None) -> tuple[dict[str, dict[str, str | None]], dict[str, str]]:
    return probe()


@dataclass(frozen=True)
class BenchState:
    config: BenchConfig | None = None  # the sweep asked for by Run


@dataclass(frozen=True)
class BenchRun:
    """A sweep so far: each point landing as it is measured, the report once it is whole."""

    results: tuple[BenchResult, ...]  # every point measured so far, in the order run
    summary: SweepSummary  # what the plots show of them
    report: BenchReport | None = None  # the whole sweep (None while it runs, or once cancelled)


def compute_bench(s: BenchState, progress=None, partial=None) -> BenchRun:
    """Run the sweep of ``s.config`` (``core.bench.sweep.run_benchmark``); ``partial`` gets the
    sweep after each point. No configuration: no sweep yet."""
    if s.config is None:
        return BenchRun((), summarise(SweepState()))
    impls, results = s.config.impls, []

    def point(r: BenchResult) -> None:
        results.append(r)
        if partial is not None:
            partial(BenchRun(tuple(results), summarise(SweepState(impls, tuple(results)))))

    report = run_benchmark(s.config, progress=progress, on_point=point)
    return BenchRun(report.results, summarise(SweepState(impls, report.results)), report)
