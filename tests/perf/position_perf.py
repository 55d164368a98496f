"""Frame time of the Position panel's RoPE clock hands while a position slider is dragged.

Run from the project root: python -m tests.perf.position_perf   (offscreen; prints medians)

Target: dragging a position slider animates at ≥ 30 fps, i.e. a frame (turn the hands and
repaint the dials) well under 33 ms, and a slider step (one recompute in core, then redraw)
fits in the same budget.
"""

from __future__ import annotations

import os
import statistics
import time
from itertools import pairwise

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

from PySide6.QtCore import QVariantAnimation
from PySide6.QtWidgets import QApplication

from app.panels.position import PositionPanel

REPEATS = 60


def median_ms(samples: list[float]) -> float:
    return 1000 * statistics.median(samples)


def frame_times(page, app) -> list[float]:
    """One animation frame each: hands at an in-between position, then a synchronous repaint."""
    times = []
    for k in range(REPEATS):
        start = time.perf_counter()
        page._frame(k / REPEATS)
        page.clocks.viewport().repaint()
        times.append(time.perf_counter() - start)
    app.processEvents()
    return times


def slider_steps(page, app) -> list[float]:
    """One drag step each: slider value → core recompute → views updated → Qt paints what changed."""
    times = []
    for k in range(REPEATS):
        start = time.perf_counter()
        page.m_slider.setValue(k % 64)
        app.processEvents()
        times.append(time.perf_counter() - start)
    page.finish_animation()
    app.processEvents()
    return times


def live_animation(page, app) -> tuple[int, float]:
    """Let one animation run in the event loop; frames delivered and median gap between them."""
    stamps: list[float] = []
    page.animation.valueChanged.connect(lambda _v: stamps.append(time.perf_counter()))
    page.m_slider.setValue(0)
    page.finish_animation()
    page.m_slider.setValue(60)
    while page.animation.state() == QVariantAnimation.State.Running:
        app.processEvents()
    gaps = [b - a for a, b in pairwise(stamps)]
    return len(stamps), median_ms(gaps) if gaps else float("nan")


def main() -> None:
    app = QApplication.instance() or QApplication([])
    panel = PositionPanel()
    panel.resize(1300, 850)
    panel.show()
    panel.set_step(3)
    app.processEvents()
    page = panel.rope
    print(f"{'d':>4} {'dials':>5} {'frame ms':>9} {'fps':>6} {'slider step ms':>15}")
    for d in (8, 64, 256):
        page.d_spin.setValue(d)
        app.processEvents()
        frame = median_ms(frame_times(page, app))
        step = median_ms(slider_steps(page, app))
        dials = len(page.result.pairs)
        print(f"{d:>4} {dials:>5} {frame:>9.2f} {1000 / frame:>6.0f} {step:>15.2f}")
    page.d_spin.setValue(8)
    frames, gap = live_animation(page, app)
    print(
        f"live animation (d = 8): {frames} frames in {page.animation.duration()} ms, median gap {gap:.1f} ms"
    )


if __name__ == "__main__":
    main()
