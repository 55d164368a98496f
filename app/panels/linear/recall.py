"""Step 4: what a fixed state forgets: N random key → value pairs stored, every key asked for,
the share recalled by softmax, linear, delta-rule and gated memories as N passes d."""

from __future__ import annotations

import numpy as np
import pyqtgraph as pg
from PySide6.QtWidgets import QFormLayout, QPushButton, QVBoxLayout, QWidget

from app.panels.linear import scripts
from app.panels.linear.state import RecallState, compute_recall
from app.panels.scripts import Script
from app.panels.step import Live, Notice, Step
from app.widgets import LabelledSlider
from app.widgets.plots import count_ticks, dashed_line, share_plot
from app.widgets.progress import RunProgress, show_runs
from app.widgets.spin_boxes import spin
from app.widgets.text import note
from core.maths.recall import BETA_RANGE, MEMORIES, RecallSweep, default_pairs

COLORS = {"softmax": "#555555", "linear": "#3d7bd9", "delta": "#d62728", "gated": "#2ca02c"}
SYMBOLS = {"softmax": "o", "linear": "t", "delta": "s", "gated": "d"}
DIMS = (4, 8, 16, 32, 64, 128, 256)


class RecallPage(Step):
    def __init__(self):
        super().__init__(Live(RecallState(), compute_recall, background=True))
        s = self.state
        self.dim_slider = self.bind(
            LabelledSlider("Width d", 4, 256, s.dim, log=True, decimals=0, choices=DIMS), "dim", int
        )
        self.beta_slider = self.bind(
            LabelledSlider("Softmax β", 0.1, BETA_RANGE[1], s.beta, log=True), "beta", float
        )
        self.decay_slider = self.bind(
            LabelledSlider("Gated γ", 0.5, 1.0, s.decay, decimals=3), "decay", float
        )
        self.seed_spin = self.bind(spin(s.seed, 0, 2**31 - 1), "seed")
        self.progress = RunProgress("not run", "N %v of %m", "all %m values of N")
        self.cancel = QPushButton("Cancel")
        show_runs(self.live, self.progress, self.cancel)
        form = QFormLayout()
        form.addRow("Seed", self.seed_spin)
        self.knee_note = note(rich=True)
        controls = QVBoxLayout()
        for control in (self.dim_slider, self.beta_slider, self.decay_slider):
            controls.addWidget(control)
        controls.addLayout(form)
        controls.addWidget(self.progress)
        controls.addWidget(self.cancel)
        controls.addWidget(self.knee_note)
        controls.addStretch(1)
        self.plot = share_plot(
            "Keys whose own value comes back", "stored pairs N", "recalled", default_pairs(s.dim)
        )
        self.curves = {
            name: self.plot.plot(
                pen=pg.mkPen(COLORS[name], width=2),
                symbol=SYMBOLS[name],
                symbolBrush=COLORS[name],
                name=label,
            )
            for name, label in MEMORIES.items()
        }
        self.width_line = dashed_line(np.log10(s.dim), "N = d")
        self.plot.addItem(self.width_line)
        self.layout_with(
            "Store N random key → value pairs, then ask for every key. Softmax keeps every pair and "
            "finds it again; a d × d state has only d² numbers to hold them all.",
            controls,
            self.plot,
        )

    def views(self) -> dict[str, QWidget]:
        return {"recall": self.plot}

    def script(self) -> Script:
        return scripts.recall(self.state)

    def draw(self, sweep: RecallSweep) -> Notice:
        count_ticks(self.plot, sweep.pairs)
        self.width_line.setValue(np.log10(sweep.dim))
        measured = sweep.pairs[: sweep.measured]
        for name, curve in self.curves.items():
            curve.setData(measured, sweep.rates[name])
        knees = ", ".join(f"{MEMORIES[m]} {sweep.knee(m)}" for m in MEMORIES)
        still = "" if sweep.measured == len(sweep.pairs) else f" Measured so far: N up to {measured[-1]}."
        self.knee_note.setText(
            f"<b>Largest N with 90 % recalled</b> (d = {sweep.dim}, β = {sweep.beta:.3g}, "
            f"γ = {sweep.decay:.3g}): {knees}.{still}"
        )
        return None

    def exercise(self) -> None:
        self.dim_slider.setValue(256)
        self.beta_slider.setValue(0.1)
        self.decay_slider.setValue(1.0)
        self.cancel.click()
        self.dim_slider.setValue(64)
        self.beta_slider.setValue(8.0)
        self.decay_slider.setValue(0.95)
        self.seed_spin.setValue(0)
