"""Tiled attention against naive attention in numpy, measured side by side (opt-in).

Run from the project root:  python -m tests.perf.flash_perf [--n 4096] [--d 64] [--repeats 5]
Prints the median time of each and the tiled / naive ratio (the target is at most 3×).
On a busy machine, run with OPENBLAS_NUM_THREADS=1: many small multithreaded matrix products
fight over the cores and the tiled timings swing wildly.
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Callable

import numpy as np

from core.maths.attention import attend, softmax
from core.maths.flash import tiled_attention


def interleaved_medians(runs: dict[str, Callable[[], object]], repeats: int) -> dict[str, float]:
    """Median seconds of each run, timed in turn (a, b, c, a, b, c, …) so load hits all alike."""
    for fn in runs.values():
        fn()  # warm-up
    times: dict[str, list[float]] = {name: [] for name in runs}
    for _ in range(repeats):
        for name, fn in runs.items():
            start = time.perf_counter()
            fn()
            times[name].append(time.perf_counter() - start)
    return {name: statistics.median(t) for name, t in times.items()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=4096)
    parser.add_argument("--d", type=int, default=64)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--blocks", type=int, nargs="+", default=[64, 128, 256])
    args = parser.parse_args()

    rng = np.random.default_rng(0)
    Q, K, V = (rng.normal(size=(args.n, args.d)) for _ in range(3))
    reference = attend(Q, K, V).output

    def bare_naive():
        return softmax(Q @ K.T / np.sqrt(args.d)) @ V

    runs: dict[str, Callable[[], object]] = {
        "attend": lambda: attend(Q, K, V),
        "bare": bare_naive,
    }
    for block in args.blocks:
        runs[f"tiled {block}"] = lambda block=block: tiled_attention(Q, K, V, block, block, record=False)
    medians = interleaved_medians(runs, args.repeats)
    attend_s, bare_s = medians["attend"], medians["bare"]
    print(f"n = {args.n}, d = {args.d}, float64, median of {args.repeats}, runs interleaved")
    print(f"  naive attend (every step kept)   {attend_s * 1e3:8.1f} ms")
    print(f"  naive softmax(QKᵀ/√d)·V          {bare_s * 1e3:8.1f} ms")
    for block in args.blocks:
        tiled_s = medians[f"tiled {block}"]
        error = np.abs(runs[f"tiled {block}"]().output - reference).max()
        print(
            f"  tiled, tiles {block:>4} × {block:<4}         {tiled_s * 1e3:8.1f} ms"
            f"   ×{tiled_s / attend_s:.2f} attend, ×{tiled_s / bare_s:.2f} bare,"
            f" max |diff| {error:.1e}"
        )


if __name__ == "__main__":
    main()
