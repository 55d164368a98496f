"""``attention-lab bench``: time attention implementations on this computer and print a table.

The numbers come from ``core.bench.sweep.run_benchmark``, the same code the Benchmark panel runs.
"""

from __future__ import annotations

import sys
from dataclasses import replace
from pathlib import Path

from app.commands.arguments import count, seed, typed
from app.commands.progress import importing, stage, working
from core import inputs

MAX_BATCH, MAX_HEADS, MAX_HEAD_DIM, MAX_REPEATS = 1024, 1024, 4096, 1000
HEADER = (
    f"{'implementation':15} {'n':>6} {'median ms':>10} {'TFLOP/s':>8} {'peak MB':>9} {'max error':>9}  status"
)


def add_arguments(parser) -> None:
    parser.add_argument(
        "--device", choices=("cpu", "cuda"), default="cpu", help="where to run (default: %(default)s)"
    )
    parser.add_argument(
        "--impl",
        nargs="+",
        metavar="IMPL",
        help="numpy-naive, numpy-tiled, torch-naive, sdpa-math, sdpa-flash, sdpa-efficient, sdpa-cudnn, "
        "flex-window, linear (linear attention, another function); default: every one that runs on the "
        "device at the chosen dtype and sizes",
    )
    parser.add_argument(
        "--lengths",
        nargs="+",
        type=typed(inputs.lengths),
        metavar="N",
        help="sequence lengths, e.g. 256 512 1024 or 128:65536 (doubling); default 256:2048",
    )
    parser.add_argument("--dtype", help="fp32, fp16, bf16 or fp64; default fp32 on the CPU, bf16 on CUDA")
    parser.add_argument("--causal", action="store_true", help="causal attention (half the work)")
    parser.add_argument(
        "--batch",
        type=count("--batch", MAX_BATCH),
        default=1,
        help="sequences per call (default: %(default)s)",
    )
    parser.add_argument(
        "--heads", type=count("--heads", MAX_HEADS), default=8, help="attention heads (default: %(default)s)"
    )
    parser.add_argument(
        "--head-dim",
        type=count("--head-dim", MAX_HEAD_DIM),
        default=64,
        help="size of each head's queries and keys (default: %(default)s)",
    )
    parser.add_argument(
        "--window",
        type=count("--window", inputs.MAX_LENGTH),
        default=256,
        help="FlexAttention sliding-window width (default: %(default)s)",
    )
    parser.add_argument(
        "--repeats",
        type=count("--repeats", MAX_REPEATS),
        default=10,
        help="timed calls per point, at most (default: %(default)s)",
    )
    parser.add_argument(
        "--seed", type=seed("--seed"), default=0, help="seed of the random Q, K, V (default: %(default)s)"
    )
    parser.add_argument("--json", metavar="PATH", help="also write {device, results} as JSON")
    parser.add_argument("--csv", metavar="PATH", help="also write the results as CSV")


def format_row(r) -> str:
    """One table line for a BenchResult."""
    if not r.ok:
        return f"{r.impl:15} {r.n:>6} {'':>10} {'':>8} {'':>9} {'':>9}  {r.status}"
    peak = f"{r.peak_bytes / 1e6:9.1f}" if r.peak_bytes is not None else f"{'?':>9}"
    share = f" ({r.tflops_pct:.0f}% of peak)" if r.tflops_pct is not None else ""
    compiled = f" (first call {r.compile_s:.1f} s)" if r.compile_s is not None else ""
    noisy = f" (noise: its calls spread {r.spread:.0%} around the median)" if r.noisy else ""
    return (
        f"{r.impl:15} {r.n:>6} {r.median_s * 1e3:10.3f} {r.tflops:8.3g} {peak} {r.max_abs_error:9.1e}"
        f"  ok{share}{compiled}{noisy}"
    )


def run(args) -> int:
    import numpy as np

    from core.bench.sweep import (
        IMPLEMENTATIONS,
        MEANINGFUL_SLOPE_LENGTHS,
        BenchConfig,
        fastest_summary,
        fit_slopes,
        run_benchmark,
        runnable_impls,
        withheld_slopes,
    )

    importing("torch")  # the sweep's device description and torch implementations need it
    lengths = tuple(n for group in args.lengths for n in group) if args.lengths else (256, 512, 1024, 2048)
    dtype = args.dtype if args.dtype is not None else ("bf16" if args.device == "cuda" else "fp32")
    config = BenchConfig(
        lengths=lengths,
        impls=tuple(args.impl) if args.impl else None,
        batch=args.batch,
        heads=args.heads,
        head_dim=args.head_dim,
        dtype=dtype,
        causal=args.causal,
        device=args.device,
        window=args.window,
        repeats=args.repeats,
    )
    left_out: dict[str, str] = {}
    if not args.impl:  # every implementation the device has, less those these settings refuse
        stage("finding the implementations that run at these settings")
        verdicts = runnable_impls(config.device, config.dtype, config.head_dim, config.causal)
        left_out = {key: reason for key, reason in verdicts.items() if reason is not None}
        runnable = tuple(key for key in config.impls if key not in left_out)
        if not runnable:
            reasons = "; ".join(f"{key}: {reason}" for key, reason in left_out.items())
            raise ValueError(f"no implementation runs at these settings ({reasons})")
        config = replace(config, impls=runnable)
    targets = [Path(p) for p in (args.json, args.csv) if p]
    for path in targets:
        if path.is_dir():
            raise OSError(f"cannot write {path}: it is a folder; give a file name")
        if not path.parent.is_dir():
            raise OSError(f"cannot write {path}: the folder {path.parent} does not exist")

    lengths_text = ", ".join(map(str, config.lengths))
    print(
        f"{len(config.points())} points: {', '.join(config.impls)} × n = {lengths_text}; "
        f"batch {config.batch}, {config.heads} heads, head_dim {config.head_dim}, {dtype}"
        f"{', causal' if config.causal else ''}"
    )
    for key, reason in left_out.items():
        print(f"left out: {key} ({reason})")
    print(HEADER, flush=True)
    points = config.points()

    def announce(done: int, total: int) -> None:
        """Before each point: what it times (said when it lasts), and a compile said at once."""
        if done < total and done not in announced:
            announced.add(done)
            n, key = points[done]
            if IMPLEMENTATIONS[key].compiles:
                stage(f"{key}, n = {n}: compiling its kernel on the first call (can take a minute)")
            else:
                working(f"timing {key} at n = {n} (point {done + 1} of {total})")

    announced: set[int] = set()
    try:
        report = run_benchmark(
            config,
            np.random.default_rng(args.seed),
            progress=announce,
            on_point=lambda r: print(format_row(r), flush=True),
        )
    except KeyboardInterrupt:
        print("cancelled", file=sys.stderr)
        return 130
    d = report.device
    memory = f", {d.memory_bytes / 2**30:.0f} GiB" if d.memory_bytes else ""
    peak = f", peak {d.peak_tflops:g} TFLOP/s for {d.dtype}" if d.peak_tflops else ""
    print(f"device: {d.kind} · {d.name}{memory}{peak} · torch {d.torch_version or 'not installed'}")
    if len(config.lengths) < MEANINGFUL_SLOPE_LENGTHS:
        print(f"log-log slopes vs n: not meaningful from fewer than {MEANINGFUL_SLOPE_LENGTHS} lengths")
    for what, label in (("median_s", "time"), ("peak_bytes", "memory")):
        slopes = fit_slopes(report.results, what, MEANINGFUL_SLOPE_LENGTHS)
        if slopes:
            print(f"log-log slope of {label} vs n: " + ", ".join(f"{k} {v:.2f}" for k, v in slopes.items()))
        for key, reason in withheld_slopes(report.results, what, MEANINGFUL_SLOPE_LENGTHS).items():
            print(f"log-log slope of {label} vs n: {key} not given: {reason}")
    print(fastest_summary(report.results))
    if args.json:
        Path(args.json).write_text(report.to_json(), encoding="utf-8")
        print(f"wrote {args.json}")
    if args.csv:
        Path(args.csv).write_text(report.to_csv(), encoding="utf-8")
        print(f"wrote {args.csv}")
    return 0
