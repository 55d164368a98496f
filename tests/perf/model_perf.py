"""Speed of the "Real model" panel (opt-in; run it directly, prints medians).

    python -m tests.perf.model_perf           # everything below
    python -m tests.perf.model_perf options   # only 4.

Measures, in this order in one fresh process:
  1. the longest UI event-loop stall while the panel loads the bundled model in the background,
     first cold (torch and transformers imported during the load), then warm;
  2. model load time, warm (core.models.load_model, libraries already imported);
  3. time from a text change to every head drawn, for ~20-token sentences: the model run in the
     worker, the views updated, and the head view (12 heads) and the model view (72 heads) painted;
  4. the view options at about 500 tokens (a sentence pair): "join pieces into words", "hide
     [CLS]/[SEP]" and the pair filter, each toggled several times: the time the UI thread spends
     in the toggle itself, the longest gap between frames until the new view is drawn, and the
     time until it is drawn. The controls are found by their text, so the script measures any
     version of the panel.
"""

from __future__ import annotations

import os
import statistics
import sys
import tempfile
import time

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

from PySide6.QtCore import QElapsedTimer, QTimer
from PySide6.QtWidgets import QApplication, QCheckBox, QComboBox, QLineEdit

from app import settings, worker

SENTENCES = [
    "The trophy didn't fit in the suitcase because it was too big for the old car.",
    "A small dog chased the red ball across the wet garden until it finally stopped.",
    "She put the heavy book on the table because it was too tired to hold it.",
    "Every student in the room read the same chapter before the teacher asked questions.",
    "The river flooded the village after three days of rain, and nobody could leave.",
    "He said the new phone was cheaper than the old one, but the battery was worse.",
    "When the lights went out, the children laughed and the adults looked for candles.",
    "Our neighbour planted tomatoes near the fence, where the sun shines all afternoon.",
]
REPEATS = 3
LONG_A = "The suitcase was unbelievably heavy, so the porter refused to carry it upstairs. " * 15
LONG_B = "Nobody expected the trophy to be that large, yet it was gigantically oversized. " * 13
OPTION_REPEATS = 6


def max_stall_during(action, poll) -> float:
    """Longest gap in ms between ticks of a 5 ms UI timer while ``action`` runs until ``poll()``."""
    clock, gaps = QElapsedTimer(), []
    clock.start()
    last = [clock.elapsed()]

    def tick():
        now = clock.elapsed()
        gaps.append(now - last[0])
        last[0] = now

    timer = QTimer()
    timer.setInterval(5)
    timer.timeout.connect(tick)
    timer.start()
    action()
    app = QApplication.instance()
    while not poll():
        app.processEvents()
        time.sleep(0.001)
    timer.stop()
    tick()
    return max(gaps)


def settled() -> bool:
    return not worker.busy()


def until_settled() -> None:
    """Process events until the worker is idle, polling every 0.5 ms as an event loop woken by the
    worker's signals would (worker.wait_idle sleeps 5 ms between polls: up to 5 ms more per hop)."""
    app = QApplication.instance()
    while not settled():
        app.processEvents()
        time.sleep(0.0005)
    app.processEvents()


def option_toggles(panel) -> None:
    """4. The view options at about 500 tokens: UI-thread time, longest frame gap, time to drawn."""
    app = QApplication.instance()
    text_a, text_b = panel.findChildren(QLineEdit)[:2]
    boxes = {box.text(): box for box in panel.findChildren(QCheckBox)}
    part = next(c for c in panel.findChildren(QComboBox) if c.findText("A→B") >= 0)
    text_a.setText(LONG_A)
    text_b.setText(LONG_B)
    worker.wait_idle()
    app.processEvents()
    toggles = {
        "join pieces into words": lambda k: boxes["join pieces into words"].setChecked(k % 2 == 0),
        "hide [CLS]/[SEP]": lambda k: boxes["hide [CLS]/[SEP]"].setChecked(k % 2 == 0),
        "pair filter": lambda k: part.setCurrentText(("A→B", "all")[k % 2]),
    }
    for name, toggle in toggles.items():
        ui, gaps, drawn = [], [], []
        for k in range(OPTION_REPEATS):
            started = [0.0, 0.0]

            def act(k=k, started=started, toggle=toggle):
                started[0] = time.perf_counter()
                toggle(k)
                started[1] = time.perf_counter()

            gaps.append(max_stall_during(act, settled))
            drawn.append(time.perf_counter() - started[0])
            ui.append(started[1] - started[0])
        print(
            f"{name:24} ({tokens_shown(panel)} tokens): UI thread in the toggle median "
            f"{statistics.median(ui) * 1000:5.0f} ms · longest frame gap median "
            f"{statistics.median(gaps):5.0f} ms (max {max(gaps):4.0f}) · drawn after median "
            f"{statistics.median(drawn) * 1000:5.0f} ms"
        )


def tokens_shown(panel) -> int:
    from app.widgets import Heatmap

    return max(len(h.row_labels) for h in panel.findChildren(Heatmap))


def main(only_options: bool = False) -> None:
    settings.use_folder(tempfile.mkdtemp())
    app = QApplication.instance() or QApplication([])
    from app.panels.model import ModelPanel
    from core.models.loaded import shared

    panel = ModelPanel()
    panel.resize(1200, 800)
    if only_options:
        max_stall_during(panel.show, lambda: panel.result is not None and settled())
        option_toggles(panel)
        return
    t0 = time.perf_counter()
    cold = max_stall_during(panel.show, lambda: panel.result is not None and not worker.busy())
    print(f"cold load in the panel (imports torch): {time.perf_counter() - t0:.2f} s")
    print(f"  longest UI stall during the cold load: {cold:.0f} ms")
    shared.clear()
    warm = max_stall_during(lambda: panel.load("minilm"), settled)
    print(f"  longest UI stall during a warm load:   {warm:.0f} ms")

    from core import models

    loads = []
    for _ in range(5):
        t = time.perf_counter()
        models.load_model("minilm")
        loads.append(time.perf_counter() - t)
    print(f"model load, warm (median of 5): {statistics.median(loads) * 1000:.0f} ms")

    page = panel.page
    for tab in (page.lines, page.grid):
        page.tabs.setCurrentWidget(tab)
        times, sizes = [], []
        for _ in range(REPEATS):
            for text in SENTENCES:
                t = time.perf_counter()
                panel.text_edit.setText(text)
                until_settled()  # its last processEvents delivers the update requests: the view repaints
                times.append(time.perf_counter() - t)
                sizes.append(panel.result.shape[-1])
        name = "head view, 12 heads" if tab is page.lines else "model view, 72 heads"
        print(
            f"text change -> all heads drawn ({name}, {min(sizes)}-{max(sizes)} tokens): "
            f"median {statistics.median(times) * 1000:.0f} ms, max {max(times) * 1000:.0f} ms"
        )
    option_toggles(panel)
    app.processEvents()


if __name__ == "__main__":
    main(only_options=sys.argv[1:] == ["options"])
