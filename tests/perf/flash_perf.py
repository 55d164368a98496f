"""Tiled attention against naive attention in numpy, measured side by side (opt-in).

Run from the project root:  python -m tests.perf.flash_perf [--n 4096] [--d 64] [--repeats 5]
Prints the median time of each and the tiled / naive ratio (the target is at most 3×).
"""

from __future__ import annotations

import argparse
import statistics
import time

import numpy as np

from core.attention import attend, softmax
from core.flash import tiled_attention


def median_seconds(fn, repeats: int) -> float:
    fn()  # warm-up
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


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

    attend_s = median_seconds(lambda: attend(Q, K, V), args.repeats)
    bare_s = median_seconds(bare_naive, args.repeats)
    print(f"n = {args.n}, d = {args.d}, float64, median of {args.repeats}")
    print(f"  naive attend (every step kept)   {attend_s * 1e3:8.1f} ms")
    print(f"  naive softmax(QKᵀ/√d)·V          {bare_s * 1e3:8.1f} ms")
    for block in args.blocks:

        def tiled(block=block):
            return tiled_attention(Q, K, V, block, block, record=False)

        tiled_s = median_seconds(tiled, args.repeats)
        error = np.abs(tiled().output - reference).max()
        print(
            f"  tiled, tiles {block:>4} × {block:<4}         {tiled_s * 1e3:8.1f} ms"
            f"   ×{tiled_s / attend_s:.2f} attend, ×{tiled_s / bare_s:.2f} bare,"
            f" max |diff| {error:.1e}"
        )


if __name__ == "__main__":
    main()
