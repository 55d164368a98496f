"""The performance suite: every perf script, one after another, and their figures in one table.

    python -m tests.perf.suite [--only start-up qkv ...] [--list]

Each script runs in its own process (so each starts cold, as a user's would), with the sizes its
panel's issue names. The table lists what each script printed, under the area it measures; a
script that fails shows its exit code and last error line instead. The figures are medians,
measured side by side where a ratio is printed. Nothing is asserted.
"""

from __future__ import annotations

import argparse
import os
import platform
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
TIMEOUT_S = 900

# (area, module, arguments), in the order of the panels
SCRIPTS = [
    ("start-up", "tests.perf.startup_perf", []),
    ("theme switch", "tests.perf.theme_perf", []),
    ("qkv", "tests.perf.qkv_perf", []),
    ("scale", "tests.perf.scale_perf", []),
    ("masks", "tests.perf.masks_perf", []),
    ("multihead", "tests.perf.multihead_perf", []),
    ("model", "tests.perf.model_perf", []),
    ("inside a decoder", "tests.perf.decoder_analysis_perf", ["--rankings", "1"]),
    ("residual stream", "tests.perf.stream_perf", []),
    ("position", "tests.perf.position_perf", []),
    ("cost (flash)", "tests.perf.flash_perf", []),
    ("bench fidelity", "tests.perf.bench_fidelity", []),
    ("linear attention", "tests.perf.linear_perf", ["--train"]),
    ("memory (hopfield)", "tests.perf.hopfield_perf", []),
    ("induction (training)", "tests.perf.induction_perf", []),
    ("induction (panel)", "tests.perf.induction_ui_perf", []),
]


def machine() -> str:
    cpu = platform.processor() or platform.machine()
    try:
        with open("/proc/cpuinfo") as info:
            cpu = next(line.split(":", 1)[1].strip() for line in info if line.startswith("model name"))
    except (OSError, StopIteration):
        pass
    load = f", load average {os.getloadavg()[0]:.1f}" if hasattr(os, "getloadavg") else ""
    return f"{cpu}, {os.cpu_count()} CPUs{load}, Python {platform.python_version()}, {platform.system()}"


def run(module: str, arguments: list[str]) -> tuple[list[str], float]:
    """The lines one script printed (its figures and their headings), and how long it ran."""
    env = dict(os.environ, QT_QPA_PLATFORM=os.environ.get("QT_QPA_PLATFORM", "offscreen"))
    start = time.perf_counter()
    try:
        done = subprocess.run(
            [sys.executable, "-m", module, *arguments],
            cwd=ROOT,
            env=env,
            capture_output=True,
            text=True,
            timeout=TIMEOUT_S,
        )
    except subprocess.TimeoutExpired:
        return [f"TIMED OUT after {TIMEOUT_S} s"], time.perf_counter() - start
    took = time.perf_counter() - start
    lines = [line.rstrip() for line in done.stdout.splitlines() if line.strip()]
    if done.returncode:
        errors = [line for line in done.stderr.splitlines() if line.strip()]
        lines.append(f"FAILED (exit {done.returncode}): {errors[-1] if errors else 'no message'}")
    return lines, took


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", nargs="+", metavar="AREA", help="run only these areas (first word)")
    parser.add_argument("--list", action="store_true", help="list the scripts and exit")
    args = parser.parse_args()
    chosen = [s for s in SCRIPTS if not args.only or s[0].split()[0] in args.only]
    if args.list or not chosen:
        for area, module, arguments in SCRIPTS:
            print(f"{area:18} python -m {module} {' '.join(arguments)}")
        return 0 if args.list else 2
    print(f"machine: {machine()}")
    failed = 0
    rows = []
    for area, module, arguments in chosen:
        print(f"running {module} …", file=sys.stderr, flush=True)
        lines, took = run(module, arguments)
        failed += any(line.startswith(("FAILED", "TIMED OUT")) for line in lines)
        rows.append((f"{area} ({took:.0f} s)", lines))
    width = max(len("area (script time)"), *(len(label) for label, _ in rows))
    print(f"{'area (script time)':{width}} │ figures")
    print(f"{'─' * width}─┼─{'─' * 78}")
    for label, lines in rows:
        for k, line in enumerate(lines or ["(no figures printed)"]):
            print(f"{label if k == 0 else '':{width}} │ {line}")
        print(f"{'─' * width}─┼─{'─' * 78}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
