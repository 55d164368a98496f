"""The GPU sweep: bf16, head dim 64 and 128, causal and not, 1,024 to 32,768 tokens.

Run from the repository root on a machine with CUDA:  python -m tests.perf.bench_gpu [JSON_DIR]
Heads are 2048 / head_dim (a model width of 2,048, as in the FlashAttention benchmarks).
Prints TFLOP/s per implementation and length; with JSON_DIR, writes one report per sweep.
"""

from __future__ import annotations

import sys
from pathlib import Path


def main(out: Path | None) -> int:
    from core.bench.device import cuda_available
    from core.bench.sweep import BenchConfig, available_impls, fastest_summary, run_benchmark

    if not cuda_available():
        print("No CUDA GPU is visible to torch; nothing to measure.")
        return 0
    impls = available_impls("cuda")
    lengths = tuple(2**k for k in range(10, 16))  # 1,024 … 32,768
    for head_dim in (64, 128):
        for causal in (False, True):
            cfg = BenchConfig(
                lengths=lengths, impls=impls, heads=2048 // head_dim, head_dim=head_dim,
                dtype="bf16", causal=causal, device="cuda", window=1024, repeats=20,
            )  # fmt: skip
            report = run_benchmark(cfg)
            d = report.device
            print(f"\n{d.name}, bf16, head_dim {head_dim}, {cfg.heads} heads, causal {causal}")
            print(f"peak {d.peak_tflops} TFLOP/s" if d.peak_tflops else "peak unknown")
            print(f"{'impl':15}" + "".join(f"{n:>9}" for n in lengths))
            for impl in impls:
                row = {r.n: r for r in report.results if r.impl == impl}
                cells = (f"{row[n].tflops:9.1f}" if row[n].ok else f"{row[n].status[:8]:>9}" for n in lengths)
                print(f"{impl:15}" + "".join(cells))
            print(fastest_summary(report.results))
            if out is not None:
                name = f"gpu-hd{head_dim}-{'causal' if causal else 'full'}.json"
                (out / name).write_text(report.to_json(), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main(Path(sys.argv[1]) if len(sys.argv) > 1 else None))
