"""Time the default induction run: wall and CPU time until the phase change, and steps per second.

Run from the project root:  python -m tests.perf.induction_perf [--seeds 0 1 2] [--layers 1|2]
Target: the default 2-layer run shows the phase change (best induction score past 0.5) within 60 s
of wall time on 2 cores.
"""

import os

for var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[var] = "1"  # set before numpy and torch load their BLAS

import argparse  # noqa: E402
import statistics  # noqa: E402
import time  # noqa: E402

from core.lab.settings import FORMED, InductionSettings  # noqa: E402
from core.lab.training import InductionRun  # noqa: E402


def one_run(settings: InductionSettings) -> dict:
    """Train once; the step, wall and CPU seconds at which the best induction score passed FORMED."""
    run = InductionRun(settings)
    start, start_cpu = time.perf_counter(), time.process_time()
    formed = None
    for c in run.train():
        if formed is None and c.induction.max() > FORMED:
            formed = (c.step, time.perf_counter() - start, time.process_time() - start_cpu)
    wall = time.perf_counter() - start
    return {"formed": formed, "wall": wall, "rate": settings.steps / wall, "end": c}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    parser.add_argument("--layers", type=int, default=2)
    args = parser.parse_args()
    settings = InductionSettings(layers=args.layers)
    print(
        f"{settings.layers}-layer default run: {settings.steps} steps, {settings.heads} heads, "
        f"width {settings.width}, vocabulary {settings.vocab}, length {settings.length}, one torch thread"
    )
    results = []
    for seed in args.seeds:
        r = one_run(InductionSettings(seed=seed, layers=args.layers))
        results.append(r)
        end = r["end"]
        if r["formed"] is None:
            when = "no induction head"
        else:
            step, wall, cpu = r["formed"]
            when = f"induction head at step {step}: {wall:5.1f} s wall, {cpu:5.1f} s CPU"
        print(
            f"  seed {seed}: {when}; {r['rate']:5.1f} steps/s; after {end.step} steps repeat loss "
            f"{end.loss_second:.3f}, best induction {end.induction.max():.2f}"
        )
    formed = [r["formed"][1] for r in results if r["formed"] is not None]
    rates = [r["rate"] for r in results]
    if formed:
        print(f"median wall time to the phase change: {statistics.median(formed):.1f} s ({len(formed)} runs)")
    print(f"median steps/s: {statistics.median(rates):.1f}; load average now {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
