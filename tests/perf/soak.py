"""Soak: many recomputes on every panel and repeated real-model loads, watching resident memory;
then background work must end cleanly when the window closes.

    python -m tests.perf.soak [--recomputes 200] [--loads 20]

Prints the process's resident memory (VmRSS) at start, after a warm-up pass and at the end, and
the growth after warm-up (the target is under 50 MB). A recompute is one change of one of the
panel's own controls (sliders and spin boxes in turn, on each lecture step), with the events
processed and background results delivered, as a student's slider drag would. Exits 1 if the
growth is 50 MB or more, a Qt warning was logged, or a worker thread outlived the window.
"""

from __future__ import annotations

import argparse
import gc
import os
import sys
import tempfile
import time

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

from PySide6.QtCore import QThreadPool, QtMsgType, qInstallMessageHandler
from PySide6.QtWidgets import QAbstractSlider, QAbstractSpinBox, QApplication

from app import settings, worker
from app.panels import PANELS
from app.qt_messages import PLATFORM_NOISE

GROWTH_LIMIT_MB = 50
TEXT = "The trophy didn't fit in the suitcase because it was too big."


def rss_mb() -> float:
    with open("/proc/self/status") as status:
        line = next(line for line in status if line.startswith("VmRSS:"))
    return int(line.split()[1]) / 1024


def controls(panel) -> list:
    """The panel's visible, enabled sliders and spin boxes (those of LabelledSliders included)."""
    return [
        w
        for w in panel.findChildren(QAbstractSlider) + panel.findChildren(QAbstractSpinBox)
        if w.isVisible() and w.isEnabled() and w.maximum() > w.minimum()
    ]


def recompute(window, key: str, count: int) -> float:
    """``count`` control changes on panel ``key``, spread over its steps; returns seconds taken."""
    panel = window.show_panel(key)
    worker.wait_idle(120)
    start, done, step = time.perf_counter(), 0, 0
    while done < count:
        panel.set_step(step % len(panel.steps))
        step += 1
        found = controls(panel)
        for w in found[: max(1, count // (2 * len(panel.steps)))]:
            if done >= count:
                break
            low, high = w.minimum(), w.maximum()
            span = high - low
            # two nearby values in the lower part of the range: a drag, not a jump to the extremes
            target = low + (span / 10 if isinstance(low, float) else max(1, span // 10)) * (done % 2)
            w.setValue(w.value() + 1 if w.value() == target and w.value() < high else target)
            QApplication.processEvents()
            worker.wait_idle(60)
            done += 1
        if not found:
            QApplication.processEvents()
            done += 1
    return time.perf_counter() - start


def load_models(count: int) -> tuple[float, float]:
    """Load the bundled model ``count`` times, run it once, and let it go; returns (seconds, RSS)."""
    from core import models

    start = time.perf_counter()
    for _ in range(count):
        model = models.load_model("minilm")
        models.run(model, TEXT)
        del model
        gc.collect()
    return time.perf_counter() - start, rss_mb()


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--recomputes", type=int, default=200, help="per panel")
    parser.add_argument("--loads", type=int, default=20, help="real-model loads (0 to skip)")
    args = parser.parse_args()
    problems: list[str] = []

    def on_qt_message(kind, _context, message):
        if kind not in (QtMsgType.QtDebugMsg, QtMsgType.QtInfoMsg) and message not in PLATFORM_NOISE:
            problems.append(f"Qt: {message}")

    qInstallMessageHandler(on_qt_message)
    start_rss = rss_mb()
    with tempfile.TemporaryDirectory() as folder:
        settings.use_folder(folder)
        app = QApplication.instance() or QApplication([])
        from app.window import MainWindow

        window = MainWindow()
        window.resize(1400, 860)
        window.show()
        has_models = any(cls.key == "model" for cls in PANELS)
        print(f"RSS at start: {start_rss:.0f} MB (before Qt and the window)")

        warm = max(1, args.recomputes // 4)
        for cls in PANELS:
            recompute(window, cls.key, warm)
        if has_models and args.loads:
            load_models(1)
        gc.collect()
        warm_rss = rss_mb()
        print(f"RSS after warm-up: {warm_rss:.0f} MB ({warm} recomputes per panel, one model load)")

        print(f"{'panel':12} {'recomputes':>10} {'ms each':>8} {'RSS MB':>7}")
        for cls in PANELS:
            took = recompute(window, cls.key, args.recomputes)
            gc.collect()
            print(f"{cls.key:12} {args.recomputes:>10} {took / args.recomputes * 1000:8.1f} {rss_mb():7.0f}")
        if has_models and args.loads:
            took, after = load_models(args.loads)
            print(f"model loads  {args.loads:>10} {took / args.loads * 1000:8.0f} {after:7.0f}")
        gc.collect()
        end_rss = rss_mb()
        growth = end_rss - warm_rss
        verdict = "ok" if growth < GROWTH_LIMIT_MB else "TOO MUCH"
        print(f"RSS at end: {end_rss:.0f} MB; growth after warm-up {growth:+.0f} MB ({verdict}, limit +50)")
        if growth >= GROWTH_LIMIT_MB:
            problems.append(f"resident memory grew {growth:.0f} MB after warm-up")

        # Close the window while background work runs (the memory panel's capacity sweep): every
        # worker thread must end.
        if "memory" in window.panels:
            window.show_panel("memory").set_step(4)  # shown, it sweeps
        busy = worker.busy()
        start = time.perf_counter()
        window.close()
        pool = QThreadPool.globalInstance()
        idle = pool.waitForDone(10_000)
        app.processEvents()
        print(
            f"window closed with background work {'running' if busy else 'not running'}: "
            f"threads done in {time.perf_counter() - start:.2f} s, "
            f"{pool.activeThreadCount()} still active"
        )
        if not idle or pool.activeThreadCount():
            problems.append("worker threads still running after the window closed")
    qInstallMessageHandler(None)
    for problem in problems:
        print(f"problem: {problem}", file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
