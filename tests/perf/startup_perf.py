"""Start-up time: process start → first painted main window, Attention Lab vs a bare PySide6 +
pyqtgraph window, measured side by side (alternating runs). Prints medians and their ratio.

    python -m tests.perf.startup_perf [runs]
"""

import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

FIRST_PAINT = """
import os
from PySide6.QtCore import QEvent, QObject
class FirstPaint(QObject):
    def eventFilter(self, obj, event):
        if event.type() == QEvent.Type.Paint:
            os._exit(0)
        return False
"""

BARE = (
    FIRST_PAINT
    + """
from PySide6.QtWidgets import QApplication, QMainWindow
import pyqtgraph as pg
app = QApplication([])
w = QMainWindow(); w.setCentralWidget(pg.PlotWidget()); w.resize(1400, 860)
f = FirstPaint(); w.installEventFilter(f); w.show(); app.exec()
"""
)

APP = (
    FIRST_PAINT
    + """
from PySide6.QtWidgets import QApplication
from app import settings
settings.use_folder({folder!r})
app = QApplication([])
from app.window import MainWindow
w = MainWindow()
f = FirstPaint(); w.installEventFilter(f); w.show(); app.exec()
"""
)


def once(code: str) -> float:
    start = time.perf_counter()
    subprocess.run(
        [sys.executable, "-c", code],
        cwd=ROOT,
        check=True,
        env=dict(os.environ, QT_QPA_PLATFORM=os.environ.get("QT_QPA_PLATFORM", "offscreen")),
    )
    return time.perf_counter() - start


def main(runs: int = 9) -> None:
    with tempfile.TemporaryDirectory() as folder:
        app_code = APP.format(folder=folder)
        once(BARE), once(app_code)  # warm the file cache
        bare, ours = [], []
        for _ in range(runs):
            bare.append(once(BARE))
            ours.append(once(app_code))
    b, a = statistics.median(bare), statistics.median(ours)
    print(f"bare PySide6 + pyqtgraph window: median {b * 1000:.0f} ms over {runs} runs")
    print(f"Attention Lab main window:       median {a * 1000:.0f} ms over {runs} runs")
    print(f"ratio: {a / b:.2f}× (target ≤ 1.5×)")


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 9)
