"""How long the UI thread stalls while the first model load runs in the background, with and
without importing torch and transformers beforehand (at idle, right after start-up).

    python -m tests.perf.import_stall [--runs 3]

Each run is a fresh process (imports are once per process): a 5 ms Qt timer on the UI thread
records the longest gap between its ticks while a worker task loads the bundled model. "warmed"
runs the libraries' import as a worker task first and reports its own longest gap too: that stall
is not removed, only moved to a moment when, perhaps, nobody is touching the window. Target: no
gap over 100 ms. Prints medians.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

CHILD = """
import json, sys, time
from PySide6.QtCore import QTimer
from PySide6.QtWidgets import QApplication
from app import worker
from core import models

app = QApplication([])
gaps, last = [], [time.perf_counter()]

def tick():
    now = time.perf_counter()
    gaps.append(now - last[0])
    last[0] = now

timer = QTimer(interval=5, timeout=tick)
timer.start()

def longest_gap_while(fn):
    gaps.clear()
    last[0] = time.perf_counter()
    worker.run_task(fn)
    worker.wait_idle(300)
    return 1000 * max(gaps, default=0.0)

out = {}
if sys.argv[1] == "warmed":
    out["warm-up import"] = longest_gap_while(models.libraries)
out["first model load"] = longest_gap_while(models.load_model)
print(json.dumps(out))
"""


def once(mode: str) -> dict[str, float]:
    env = dict(os.environ, QT_QPA_PLATFORM=os.environ.get("QT_QPA_PLATFORM", "offscreen"))
    done = subprocess.run(
        [sys.executable, "-c", CHILD, mode], cwd=ROOT, env=env, capture_output=True, text=True, check=True
    )
    return json.loads(done.stdout.splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    samples: dict[str, list[float]] = {}
    for _ in range(args.runs):  # side by side: one cold and one warmed process per round
        for mode in ("cold", "warmed"):
            for what, ms in once(mode).items():
                samples.setdefault(f"{mode}: {what}", []).append(ms)
    print(f"longest UI-thread stall (ms, median of {args.runs} runs; worst run in brackets)")
    for label, values in samples.items():
        print(f"  {label:32} {statistics.median(values):7.0f}  [{max(values):.0f}]")


if __name__ == "__main__":
    main()
