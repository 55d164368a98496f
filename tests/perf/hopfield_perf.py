"""Time a full capacity sweep (both networks, 20 loads × 50 trials, N = 64) on one core.

Run from the project root:  python -m tests.perf.hopfield_perf
Target: median under 5 s.
"""

import os

for var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[var] = "1"  # one core, set before numpy loads its BLAS

import statistics  # noqa: E402
import time  # noqa: E402

import numpy as np  # noqa: E402

from core.hopfield import capacity_sweep, default_loads  # noqa: E402

REPEATS = 5


def main() -> None:
    loads = default_loads()
    times = []
    for seed in range(REPEATS):
        start = time.perf_counter()
        sweep = capacity_sweep(np.random.default_rng(seed), n=64, loads=loads, trials=50)
        times.append(time.perf_counter() - start)
    print(f"capacity sweep, {loads.size} loads × 50 trials, N = 64, one core")
    print(f"  median {statistics.median(times):.2f} s over {REPEATS} runs (min {min(times):.2f} s)")
    print(f"  loads:     {' '.join(f'{m:5d}' for m in sweep.loads)}")
    print(f"  classical: {' '.join(f'{r:5.2f}' for r in sweep.classical)}")
    print(f"  modern:    {' '.join(f'{r:5.2f}' for r in sweep.modern)}")


if __name__ == "__main__":
    main()
