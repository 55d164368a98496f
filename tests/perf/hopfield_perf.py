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

from core.maths.hopfield import capacity_sweep, default_loads  # noqa: E402

REPEATS = 5


def main() -> None:
    loads = default_loads()
    wall, cpu = [], []
    for seed in range(REPEATS):
        start, start_cpu = time.perf_counter(), time.process_time()
        sweep = capacity_sweep(np.random.default_rng(seed), n=64, loads=loads, trials=50)
        wall.append(time.perf_counter() - start)
        cpu.append(time.process_time() - start_cpu)
    print(f"capacity sweep, {loads.size} loads × 50 trials, N = 64, one core")
    print(f"  wall: median {statistics.median(wall):.2f} s over {REPEATS} runs (min {min(wall):.2f} s)")
    print(f"  CPU:  median {statistics.median(cpu):.2f} s (wall above CPU = waiting for a busy core)")
    print(f"  loads:     {' '.join(f'{m:5d}' for m in sweep.loads)}")
    print(f"  classical: {' '.join(f'{r:5.2f}' for r in sweep.classical)}")
    print(f"  modern:    {' '.join(f'{r:5.2f}' for r in sweep.modern)}")


if __name__ == "__main__":
    main()
