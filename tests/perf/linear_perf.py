"""Linear attention panel: the redraw of steps 1–4 on a control change at their defaults, the recall
sweep (7 values of N, d = 64, four memories), and with --train the three recall models trained
to their final accuracy (the first checkpoint within 0.01 of the last), on one core.

Run from the project root:  python -m tests.perf.linear_perf [--train]
Targets: each compute ≤ 16 ms (a frame), the sweep ≤ 300 ms, each model ≤ 60 s of training.
"""

import os

for var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[var] = "1"  # one core, set before numpy loads its BLAS

import statistics  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
from dataclasses import replace  # noqa: E402

from app.panels.linear.state import (  # noqa: E402
    BracketState,
    FeatureState,
    RecallState,
    RunningState,
    compute_bracket,
    compute_features,
    compute_recall,
    compute_running,
)

REPEATS = 21


def median_ms(compute, states) -> float:
    """Median milliseconds of ``compute`` over ``states`` (each a control's change), cycled; a
    temperature never seen before computes the error curve anew, other changes reuse it."""
    times = []
    for k in range(REPEATS):
        state = states[k % len(states)]
        start = time.perf_counter()
        compute(state)
        times.append(1000 * (time.perf_counter() - start))
    return statistics.median(times)


def train() -> None:
    from core.lab.recall_task import RecallRun
    from core.lab.settings import RecallSettings

    run = RecallRun(RecallSettings())
    checkpoints, clock = [], []
    start = time.perf_counter()
    for checkpoint in run.train():
        checkpoints.append(checkpoint)
        clock.append(time.perf_counter() - start)
    per_model = clock[-1] / len(run.models)
    print(f"recall models, 600 steps each: {clock[-1]:.0f} s for the three ({per_model:.0f} s a model)")
    for mixer in run.models:
        final = checkpoints[-1].accuracy[mixer]
        reached = next(k for k, c in enumerate(checkpoints) if c.accuracy[mixer] >= final - 0.01)
        seconds = clock[reached] / len(run.models)
        step = checkpoints[reached].step
        print(f"  {mixer:8} final accuracy {final:.3f}, reached at step {step} (~{seconds:.0f} s)")


def main() -> None:
    bracket = BracketState()
    features = FeatureState()
    running = RunningState()
    print("one core; median of", REPEATS, "computes, each a control changed at the defaults")
    rows = (
        ("1 bracket trick (seed)", compute_bracket, [replace(bracket, seed=s) for s in range(3)]),
        (
            "2 feature maps (temperature)",
            compute_features,
            [replace(features, temperature=0.5 + t / 10) for t in range(REPEATS)],
        ),
        (
            "2 feature maps (features m)",
            compute_features,
            [replace(features, features=m) for m in (32, 64, 128)],
        ),
        ("3 running state (token)", compute_running, [replace(running, token=t) for t in (3, 5, 7)]),
    )
    for name, compute, states in rows:
        print(f"  {name:30} {median_ms(compute, states):7.2f} ms")
    sweep = median_ms(compute_recall, [replace(RecallState(), seed=s) for s in range(3)])
    print(f"  {'4 recall sweep (7 N, d = 64)':30} {sweep:7.2f} ms")
    if "--train" in sys.argv:
        train()


if __name__ == "__main__":
    main()
