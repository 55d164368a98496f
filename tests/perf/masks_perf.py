"""Repaint latency of the masks panel at 64 tokens: time from a control change to the panel
painted (recompute + view updates + a synchronous repaint). Prints the median and p95 wall time
per control and the median CPU time of this process (closer to the wall time of an idle machine
when other programs compete for the cores), and the core recompute alone.

    python -m tests.perf.masks_perf [repeats]

The target is one 60 Hz frame (16.7 ms) per change, median.
"""

import os
import statistics
import sys
import time

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

from PySide6.QtWidgets import QApplication

from app.panels.masks import MasksPanel
from app.panels.masks.state import MasksState, compute_masks
from core.maths import masks

WORDS = " ".join(f"w{i}" for i in range(64))


def summary(times: list[tuple[float, float]]) -> str:
    wall = sorted(w for w, _ in times)
    p95 = wall[int(0.95 * (len(wall) - 1))]
    cpu = statistics.median(c for _, c in times)
    return (
        f"median {statistics.median(wall) * 1000:6.1f} ms   p95 {p95 * 1000:6.1f} ms   "
        f"cpu median {cpu * 1000:6.1f} ms"
    )


def measure(action) -> tuple[float, float]:
    """(wall, CPU) seconds of one call."""
    wall, cpu = time.perf_counter(), time.process_time()
    action()
    return time.perf_counter() - wall, time.process_time() - cpu


def timed(panel, action, repeats) -> list[tuple[float, float]]:
    def change_and_paint(k):
        action(k)
        panel.repaint()
        QApplication.processEvents()

    return [measure(lambda k=k: change_and_paint(k)) for k in range(repeats)]


def main(repeats: int = 60) -> None:
    app = QApplication.instance() or QApplication([])
    panel = MasksPanel()
    panel.resize(1100, 860)
    panel.show()
    panel.tokens_edit.setText(WORDS)
    app.processEvents()
    kinds = [masks.KINDS.index(k) for k in ("causal", "sliding_window", "global_local", "none")]
    actions = {
        "toggle kind": lambda k: panel.kind_combo.setCurrentIndex(kinds[k % len(kinds)]),
        "drag window": lambda k: (
            panel.kind_combo.setCurrentIndex(masks.KINDS.index("sliding_window")),
            panel.window_slider.setValue(2 + k % 30),
        ),
        "padding": lambda k: panel.pad_spin.setValue(k % 8),
        "click cell": lambda k: panel.toggle_cell(k % 64, (3 * k) % 64),
    }
    for step in range(len(panel.steps)):
        panel.set_step(step)
        for name, action in actions.items():
            print(f"step {step + 1} · {name:12} {summary(timed(panel, action, repeats))}")
    state = MasksState(text=WORDS, kind="sliding_window", window=8)
    core = [measure(lambda: compute_masks(state)) for _ in range(repeats)]
    print(f"core recompute alone      {summary(core)}")


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 60)
