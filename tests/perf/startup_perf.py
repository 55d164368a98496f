"""Start-up time: process start → first painted main window, Attention Lab vs a bare PySide6 +
pyqtgraph window, measured side by side (alternating runs). Prints medians and their ratio.

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
from PySide6.QtCore import QEvent, QObject
from PySide6.QtWidgets import QApplication, QMainWindow
import pyqtgraph as pg
class ExitAfterPaint(QObject):
    def eventFilter(self, obj, event):
        if event.type() == QEvent.Type.Paint:
            app.quit()
        return False
app = QApplication([])
w = QMainWindow(); w.setCentralWidget(pg.PlotWidget()); w.resize(1400, 860)
f = ExitAfterPaint(); app.installEventFilter(f); w.show(); app.exec()
"""


def once(command: list[str], env: dict) -> float:
    start = time.perf_counter()
    subprocess.run(command, cwd=ROOT, check=True, env=env, stderr=subprocess.DEVNULL)
    return time.perf_counter() - start


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
    bare = statistics.median(times["bare PySide6 + pyqtgraph window"])
    for name, samples in times.items():
        med = statistics.median(samples)
        print(f"{name:34} median {med * 1000:6.0f} ms over {args.runs} runs   {med / bare:.2f}× bare")


if __name__ == "__main__":
    main()
