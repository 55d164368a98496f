"""The Benchmark panel's steps as scripts over core (see app/panels/scripts.py). Every step runs
the sweep again, at the panel's sizes: times are measured, so the numbers differ a little."""

from __future__ import annotations

from app.panels.bench.state import PLOTS
from app.panels.scripts import Script, lines
from core.bench.sweep import BenchConfig

# Code: which implementations run on the sweep's device with its settings, or why not.
RUNNABLE = """
    # Which implementations run on this device with these settings, or why not.
    for impl, reason in runnable_impls(config.device, config.dtype, config.head_dim, config.causal).items():
        print(f"{impl}: {'runs' if reason is None else reason}")
"""


def sweep_code(c: BenchConfig, names: list[str], runnable: bool) -> str:
    """Code that runs the sweep ``c`` as ``report`` and prints every point; ``ran``: those that ran.
    ``names``: more of core.bench.sweep to import; ``runnable``: first say which implementations run here."""
    names = ["BenchConfig", "fastest_summary", "run_benchmark", *names] + ["runnable_impls"] * runnable
    imports = ", ".join(names)
    if len(imports) > 70:  # one name a line
        imports = "(" + "".join(f"\n        {name}," for name in names) + "\n    )"
    return f"""
    from core.bench.sweep import {imports}
    from core.printing import table

    # The sweep: each implementation at each sequence length n, with the panel's settings.
    config = BenchConfig(
        lengths={c.lengths!r},
        impls={c.impls!r},
        batch={c.batch}, heads={c.heads}, head_dim={c.head_dim}, dtype={c.dtype!r}, causal={c.causal},
        device={c.device!r}, window={c.window}, repeats={c.repeats},
    ){RUNNABLE if runnable else ""}
    # Random Q, K, V (seed 0); a point's time is the median of its calls after a warm-up.
    report = run_benchmark(config, on_point=lambda r: print(f"{{r.impl}}, n = {{r.n}}: {{r.status}}"))
    ran = [r for r in report.results if r.ok]
    print("Seconds per call, TFLOP/s, bytes allocated beyond the inputs, largest error against fp64")
    points = [[r.median_s, r.tflops, r.peak_bytes, r.max_abs_error] for r in ran]
    names = [f"{{r.impl}} n={{r.n}}" for r in ran]
    print(table(points, names, ["median s", "TFLOP/s", "peak bytes", "max error"]))
    print(fastest_summary(report.results))
    """


def plot_step(c: BenchConfig, field: str, runnable: bool = False) -> Script:
    """A step that shows ``field`` (a PLOTS field) of the sweep ``c`` against n, on log-log axes;
    ``runnable``: first say which implementations run here."""
    name, _, label, unit, with_slope = next(plot for plot in PLOTS if plot[1] == field)
    slopes = f"""
    # The slope of log {label} against log n: about 2 grows with n², about 1 with n.
    for impl, slope in fit_slopes(report.results, {field!r}, MEANINGFUL_SLOPE_LENGTHS).items():
        print(f"{{impl}}: slope {{slope:.6g}}")
    for impl, why in withheld_slopes(report.results, {field!r}, MEANINGFUL_SLOPE_LENGTHS).items():
        print(f"{{impl}}: no slope: {{why}}")
    """
    names = ["MEANINGFUL_SLOPE_LENGTHS", "fit_slopes", "withheld_slopes"]
    body = (
        sweep_code(c, names if with_slope else [], runnable)
        + (slopes if with_slope else "")
        + f"""
    curves = {{}}
    for impl in config.impls:
        mine = [r for r in ran if r.impl == impl and r.{field}]  # log axes: values above 0 only
        curves[impl] = ([r.n for r in mine], [r.{field} for r in mine])
    """
    )
    ylabel = f"{label} ({unit})" if unit else label
    return Script(
        body, lines("curves", f"{name} against sequence length", "sequence length n", ylabel, log="xy")
    )


def what_runs(c: BenchConfig) -> Script:
    """Step 1: which implementations run here, then the sweep and its time plot."""
    return plot_step(c, "median_s", runnable=True)
