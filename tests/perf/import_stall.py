"""How long the UI thread stalls while the first model load runs in the background, with and
without importing torch and transformers beforehand (at idle, right after start-up).

    python -m tests.perf.import_stall [--runs 3] [--model smollm2] [--why 50]

Each run is a fresh process (imports are once per process): a 5 ms Qt timer on the UI thread
records the longest gap between its ticks while a worker task loads the model. "warmed" runs the
libraries' import as a worker task first and reports its own longest gap too: that stall is not
removed, only moved to a moment when, perhaps, nobody is touching the window. Target: no gap
over 100 ms. Prints medians and the load average before each run (a busy machine adds gaps).

--why MS says where the time goes: each tick re-arms faulthandler's watchdog, which runs without
the interpreter lock, so a stall longer than MS ms dumps the worker's stack while it lasts; the
innermost frames of each such stall are printed (the call that holds the lock, or a garbage
collection started at that line).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
from itertools import groupby
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

CHILD = """
import faulthandler, json, os, sys, threading, time
from PySide6.QtCore import QTimer
from PySide6.QtWidgets import QApplication
from app import worker
from core import models

mode, model, why_ms, dump = sys.argv[1], sys.argv[2], float(sys.argv[3]), sys.argv[4]
app = QApplication([])
gaps, last = [], [time.perf_counter()]
watchdog = open(dump, "w") if why_ms else None
if watchdog:
    print(f"main thread 0x{threading.main_thread().ident:016x}", file=watchdog, flush=True)
dumped = [os.fstat(watchdog.fileno()).st_size if watchdog else 0]

def tick():
    now = time.perf_counter()
    gaps.append(now - last[0])
    last[0] = now
    if watchdog:
        size = os.fstat(watchdog.fileno()).st_size
        if size != dumped[0]:  # the watchdog wrote during the gap that just ended
            watchdog.write("end of stall\\n")
            watchdog.flush()
            dumped[0] = os.fstat(watchdog.fileno()).st_size
        faulthandler.dump_traceback_later(why_ms / 1000, repeat=True, file=watchdog)

timer = QTimer(interval=5, timeout=tick)
timer.start()

def longest_gap_while(fn, *args):
    gaps.clear()
    last[0] = time.perf_counter()
    worker.run_task(fn, *args)
    worker.wait_idle(300)
    return 1000 * max(gaps, default=0.0)

out = {}
if mode == "warmed":
    out["warm-up import"] = longest_gap_while(models.libraries)
out["first model load"] = longest_gap_while(models.load_model, model)
faulthandler.cancel_dump_traceback_later()
print(json.dumps(out))
"""


def once(mode: str, model: str, why_ms: float, dump: Path) -> dict[str, float]:
    env = dict(os.environ, QT_QPA_PLATFORM=os.environ.get("QT_QPA_PLATFORM", "offscreen"))
    args = [sys.executable, "-c", CHILD, mode, model, str(why_ms), str(dump)]
    done = subprocess.run(args, cwd=ROOT, env=env, capture_output=True, text=True)
    if done.returncode:
        raise SystemExit(f"the {mode} run failed:\n{done.stderr}")
    return json.loads(done.stdout.splitlines()[-1])


def stalls(dump: Path, frames: int = 3) -> list[list[tuple[int, list[str]]]]:
    """For each stall: (dumps in a row, the worker's innermost frames) for each run of identical
    dumps; one dump per watchdog period."""
    text = dump.read_text()
    main = text.splitlines()[0].split()[-1] if text else ""
    found = []
    for stall in text.split("end of stall")[:-1]:
        tops = []
        for block in stall.split("Timeout (")[1:]:
            threads = re.split(r"\n(?=(?:Current thread|Thread) 0x)", block)[1:]
            others = [t for t in threads if main not in t.splitlines()[0]]
            lines = [line.strip() for t in others[:1] for line in t.splitlines()[1:] if "File" in line]
            tops.append(
                [re.sub(r'File ".*?(site-packages/|python3\.\d+/)', 'File "', s) for s in lines[:frames]]
            )
        if tops:
            found.append([(len(list(run)), top) for top, run in groupby(tops)])
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--model", default="minilm", help="minilm (default), smollm2 or a folder")
    parser.add_argument(
        "--why", type=float, default=0.0, metavar="MS", help="print the stacks of stalls over MS ms"
    )
    args = parser.parse_args()
    samples: dict[str, list[float]] = {}
    loads = []
    with tempfile.TemporaryDirectory() as folder:
        for run in range(args.runs):  # side by side: one cold and one warmed process per round
            for mode in ("cold", "warmed"):
                loads.append(os.getloadavg()[0])
                dump = Path(folder) / f"{mode}-{run}.txt"
                for what, ms in once(mode, args.model, args.why, dump).items():
                    samples.setdefault(f"{mode}: {what}", []).append(ms)
                if args.why:
                    print(f"{mode} run {run + 1}: stalls over {args.why:.0f} ms, worker's innermost frames")
                    for stall in stalls(dump):
                        print(f"  stall of {sum(n for n, _ in stall) * args.why:.0f} ms or more:")
                        for n, top in stall:
                            print(f"    {n} × " + "\n        ".join(top or ["(no Python frame)"]))
    print(
        f"longest UI-thread stall loading {args.model} "
        f"(ms, median of {args.runs} runs; worst run in brackets); "
        f"load average {min(loads):.1f}–{max(loads):.1f}"
    )
    for label, values in samples.items():
        print(f"  {label:32} {statistics.median(values):7.0f}  [{max(values):.0f}]")


if __name__ == "__main__":
    main()
