"""Step 1: the task. A random block shown twice; the first copy cannot be predicted, the second can."""

from __future__ import annotations

import math

import numpy as np
import pyqtgraph as pg
from PySide6.QtWidgets import QFormLayout, QVBoxLayout, QWidget

from app.panels.induction import scripts
from app.panels.induction.state import TaskResult, TaskState, compute_task
from app.panels.scripts import Script
from app.panels.step import Live, Notice, Step
from app.widgets.plots import plot
from app.widgets.spin_boxes import spin
from app.widgets.text import note

NEW, REPEAT = "#1f77b4", "#ff7f0e"


class TaskPage(Step):
    def __init__(self):
        super().__init__(Live(TaskState(), compute_task, background=True))  # imports torch
        s = self.state
        self.seed_spin = self.bind(spin(s.seed, 0, 1_000_000), "seed")
        self.length_spin = self.bind(spin(s.length, 0, 64), "length")
        self.vocab_spin = self.bind(spin(s.vocab, 0, 2048), "vocab")
        controls = QFormLayout()
        controls.addRow("Example", self.seed_spin)
        controls.addRow("Block length", self.length_spin)
        controls.addRow("Vocabulary", self.vocab_spin)
        self.sequence = note("Drawing an example…", rich=True)  # the first one waits for torch to load
        self.best = plot("The least loss any model can expect", "position of the token to predict", "nats")
        self.best.addLegend(offset=(-8, 8))
        self.new_bars = pg.BarGraphItem(x=[], height=[], width=0.8, brush=NEW)
        # A repeated target's least loss is 0: its bar is a thick line at 0, so it still shows.
        self.repeat_bars = pg.BarGraphItem(
            x=[], height=[], width=0.8, brush=REPEAT, pen=pg.mkPen(REPEAT, width=6)
        )
        for bars in (self.new_bars, self.repeat_bars):
            self.best.addItem(bars)
        self.best.plotItem.legend.addItem(self.new_bars, "new token: a guess among V")
        self.best.plotItem.legend.addItem(self.repeat_bars, "repeated: can be copied")
        views = QVBoxLayout()
        views.addWidget(self.sequence)
        views.addWidget(self.best, 1)
        self.layout_with(
            "The model reads token numbers and must predict the next one at every position. A block "
            "of random tokens is shown, then shown again. Nothing in the first copy can be predicted; "
            "in the second, every token already appeared one place after the current token's first "
            "appearance.",
            controls,
            views,
        )

    def views(self) -> dict[str, QWidget]:
        return {"task": self.best}

    def script(self) -> Script:
        return scripts.task(self.state)

    def draw(self, r: TaskResult) -> Notice:
        n = len(r.tokens) // 2
        first = " ".join(str(t) for t in r.tokens[:n])
        second = " ".join(str(t) for t in r.tokens[n:])
        self.sequence.setText(
            f"<p style='font-size:large'><span style='color:{NEW}'>{first}</span> &nbsp;│&nbsp; "
            f"<span style='color:{REPEAT}'>{second}</span></p>"
        )
        targets = np.arange(1, 2 * n)
        guess = r.best_loss > 0
        self.new_bars.setOpts(x=targets[guess], height=r.best_loss[guess])
        self.repeat_bars.setOpts(x=targets[~guess], height=r.best_loss[~guess])
        self.best.setYRange(0, math.log(max(r.vocab, 2)) * 1.15, padding=0)
        return (
            f"Guessing among {r.vocab} tokens costs ln {r.vocab} = {math.log(r.vocab):.2f} nats a token. "
            f"A model that copies from the first copy pays nothing on the last {n - 1} targets: the second "
            "copy's first token follows nothing that says the repeat begins.",
            "info",
        )
