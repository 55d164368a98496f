"""The monkey over many consecutive seeds, each in its own process, one line per seed.

    python -m tests.perf.monkey_seeds [--first 1] [--count 30] [--actions 2000] [--logs DIR]

Each seed runs tests/app/test_monkey.py alone (MONKEY_SEED, MONKEY_ACTIONS) in a fresh Python
process, so a pass also means the process exited 0 after the window closed. Prints the seed, the
actions taken, the result, the rate and the slowest action; the full output of a failing seed is
kept in DIR/seed-N.txt and its first problem is printed. Exits 1 if any seed failed.
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SUMMARY = re.compile(
    r"monkey seed (?P<seed>\d+): (?P<actions>\d+) actions in (?P<seconds>[\d.]+) s = (?P<rate>[\d.]+) "
    r"actions/s; slowest (?P<slowest>.*?); background work cut short (?P<cut>\d+)×"
)
PROBLEM = re.compile(r"^E\s+- (.*)$", re.MULTILINE)


def run_seed(seed: int, actions: int, logs: Path, timeout_s: float) -> tuple[bool, str]:
    """Run one seed in a subprocess; (passed, the line to print)."""
    env = dict(os.environ, MONKEY_SEED=str(seed), MONKEY_ACTIONS=str(actions), QT_QPA_PLATFORM="offscreen")
    command = [sys.executable, "-m", "pytest", "tests/app/test_monkey.py::test_monkey", "-q", "-s"]
    command += ["-p", "no:cacheprovider"]
    start = time.perf_counter()
    try:
        done = subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True, timeout=timeout_s)
        output, code = done.stdout + done.stderr, done.returncode
    except subprocess.TimeoutExpired as exc:
        output, code = f"{exc.stdout or ''}{exc.stderr or ''}\ntimed out after {timeout_s:.0f} s", -1
    wall = time.perf_counter() - start
    summary = SUMMARY.search(output)
    if summary:
        figures = (
            f"{summary['actions']:>5} actions  {summary['rate']:>5} actions/s  "
            f"slowest {summary['slowest']}  (cut short {summary['cut']}×)"
        )
    else:
        figures = "no summary line"
    passed = code == 0
    line = f"seed {seed:>6}  {'pass' if passed else f'FAIL (exit {code})':<14} {figures}  [{wall:.0f} s]"
    if not passed:
        logs.mkdir(parents=True, exist_ok=True)
        log = logs / f"seed-{seed}.txt"
        log.write_text(output, encoding="utf-8")
        problems = PROBLEM.findall(output)
        line += f"\n    {problems[0] if problems else output.strip().splitlines()[-1]}  (full output: {log})"
    return passed, line


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--first", type=int, default=1, help="the first seed")
    parser.add_argument("--count", type=int, default=30, help="how many consecutive seeds")
    parser.add_argument("--actions", type=int, default=2000, help="actions per seed")
    parser.add_argument("--timeout", type=float, default=3600, help="seconds one seed may take")
    parser.add_argument("--logs", type=Path, default=Path(tempfile.gettempdir()) / "monkey-seeds")
    args = parser.parse_args(argv)
    print(f"{args.count} seeds from {args.first}, {args.actions} actions each", flush=True)
    failed = []
    for seed in range(args.first, args.first + args.count):
        passed, line = run_seed(seed, args.actions, args.logs, args.timeout)
        print(line, flush=True)
        if not passed:
            failed.append(seed)
    tail = f"; failed: {failed}" if failed else ""
    print(f"{args.count - len(failed)} of {args.count} seeds passed{tail}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
