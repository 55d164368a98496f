"""Start-up time: process start → first painted main window, Attention Lab vs a bare PySide6 +
pyqtgraph window, measured side by side (alternating runs). Prints medians and their ratio, and
the whole run (start, paint, quit and process exit) beside it.

Each process prints the moment of its first paint ("first paint at SECONDS"); start-up is that
moment less the moment just before the process was started.

    python -m tests.perf.startup_perf [--runs N] [--frozen PATH/TO/attention-lab]

With --frozen, the standalone build is timed in the same rounds as the pip-installed app.
"""

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

BARE = """
import time
from PySide6.QtCore import QEvent, QObject
from PySide6.QtWidgets import QApplication, QMainWindow
import pyqtgraph as pg
class ExitAfterPaint(QObject):
    def eventFilter(self, obj, event):
        if event.type() == QEvent.Type.Paint:
            app.removeEventFilter(self)
            print(f"first paint at {time.time():.6f}", flush=True)
            app.quit()
        return False
app = QApplication([])
w = QMainWindow(); w.setCentralWidget(pg.PlotWidget()); w.resize(1400, 860)
f = ExitAfterPaint(); app.installEventFilter(f); w.show(); app.exec()
"""


def once(command: list[str], env: dict) -> tuple[float, float]:
    """(seconds to the first paint, seconds to the process's end) of one run of ``command``."""
    start = time.time()
    done = subprocess.run(
        command, cwd=ROOT, check=True, env=env, stderr=subprocess.DEVNULL, stdout=subprocess.PIPE, text=True
    )
    end = time.time()
    painted = next(
        float(line.split()[-1]) for line in done.stdout.splitlines() if line.startswith("first paint at")
    )
    return painted - start, end - start


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=9)
    parser.add_argument("--frozen", help="a standalone build's attention-lab executable")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as home:
        # A fresh settings folder (XDG_CONFIG_HOME) so every run starts the same way.
        env = dict(
            os.environ, QT_QPA_PLATFORM=os.environ.get("QT_QPA_PLATFORM", "offscreen"), XDG_CONFIG_HOME=home
        )
        commands = {
            "bare PySide6 + pyqtgraph window": [sys.executable, "-c", BARE],
            "Attention Lab (python -m app)": [sys.executable, "-m", "app", "--exit-after-paint"],
        }
        if args.frozen:
            commands["Attention Lab (standalone build)"] = [args.frozen, "--exit-after-paint"]
        for command in commands.values():
            once(command, env)  # warm the file cache
        times = {name: [] for name in commands}
        for _ in range(args.runs):
            for name, command in commands.items():
                times[name].append(once(command, env))
    bare = [
        statistics.median(column) for column in zip(*times["bare PySide6 + pyqtgraph window"], strict=True)
    ]
    print(f"{'median over ' + str(args.runs) + ' runs':34} {'first paint':>18} {'whole run':>18}")
    for name, samples in times.items():
        cells = [statistics.median(column) for column in zip(*samples, strict=True)]
        print(
            f"{name:34}"
            + "".join(f" {m * 1000:6.0f} ms {m / b:5.2f}×" for m, b in zip(cells, bare, strict=True))
        )


if __name__ == "__main__":
    main()
