"""Leave the app many times by every path and count how the processes ended.

    python -m tests.perf.exit_stress [--runs 5] [--paths quit sigint ...] [--panels qkv ...]
                                     [--jobs 2] [--root OTHER/CHECKOUT]

Each run opens one panel in a fresh process with empty settings and leaves it by one path after
the first paint (app.main.EXIT_PATHS). Prints, per path and per panel, how many runs ended with
each exit code, how many wrote to stderr and how many did not save the settings. --root runs
another checkout's app (an older one knows only the "quit" path) for a before/after comparison.
"""

from __future__ import annotations

import argparse
import os
import tempfile
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from app.main import EXIT_PATHS
from app.panels import PANELS
from tests.exit_runs import ROOT, Exit, leave


def tally(exits: list[Exit]) -> str:
    codes = Counter(e.code for e in exits)
    noisy = sum(bool(e.stderr) for e in exits)
    unsaved = sum(e.saved_panel != e.panel for e in exits)
    text = ", ".join(f"exit {code}: {count}" for code, count in sorted(codes.items()))
    return f"{len(exits):4} runs  {text}; stderr written: {noisy}; settings not saved: {unsaved}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5, help="runs per panel and path (default 5)")
    parser.add_argument("--paths", nargs="+", choices=EXIT_PATHS, default=list(EXIT_PATHS))
    parser.add_argument("--panels", nargs="+", choices=[cls.key for cls in PANELS])
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 2, help="processes at a time")
    parser.add_argument("--root", type=Path, default=ROOT, help="the checkout whose app is run")
    args = parser.parse_args()
    keys = args.panels or [cls.key for cls in PANELS]
    plan = [(key, path) for _ in range(args.runs) for key in keys for path in args.paths]
    shape = f"{args.runs} × {len(keys)} panels × {len(args.paths)} paths"
    print(f"{len(plan)} runs: {shape}, {args.jobs} at a time, app from {args.root}")
    with tempfile.TemporaryDirectory() as home, ThreadPoolExecutor(args.jobs) as pool:
        folders = [Path(home) / str(number) for number in range(len(plan))]
        exits = list(pool.map(lambda job, folder: leave(*job, folder, args.root), plan, folders))
    for path in args.paths:
        print(f"{path:10} {tally([e for e in exits if e.path == path])}")
    for key in keys:
        print(f"{key:10} {tally([e for e in exits if e.panel == key])}")
    print(f"{'all':10} {tally(exits)}")
    lines = Counter(line for e in exits for line in e.stderr.splitlines() if line.strip())
    for line, count in lines.most_common(8):
        print(f"  stderr ×{count}: {line[:110]}")


if __name__ == "__main__":
    main()
