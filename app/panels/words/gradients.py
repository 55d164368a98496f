"""Step 2: gradients: gradient × input, and integrated gradients with its completeness gap and, when
asked, that gap at 8 to 256 steps. Red pushes the answer up, blue pushes it down."""

from __future__ import annotations

import numpy as np
import pyqtgraph as pg
from PySide6.QtWidgets import QCheckBox, QFormLayout, QLineEdit, QVBoxLayout, QWidget

from app.panels.scripts import Script
from app.panels.step import Live, Notice, Step
from app.panels.words import scripts
from app.panels.words.state import WordsResult
from app.panels.words.views import show, strip, told
from app.widgets.plots import plot
from app.widgets.spin_boxes import spin
from app.widgets.text import note
from core.interp.token_scores import GAP_STEPS, IG_RULE


class GradientsPage(Step):
    def __init__(self, live: Live):
        super().__init__(live)
        self.steps = self.bind(spin(self.state.steps, 0, 100_000), "steps")
        self.baseline = self.bind(QLineEdit(self.state.baseline), "baseline")
        self.baseline.setPlaceholderText("zero")
        self.settles = self.bind(QCheckBox(f"The gap at {GAP_STEPS[0]} to {GAP_STEPS[-1]} steps"), "settles")
        self.settles.setToolTip(f"{sum(GAP_STEPS)} more steps: does the gap shrink as the steps grow?")
        self.strips = strip("Each token's input: how much it moves the answer", signed=True)
        self.gap_plot = plot("Completeness gap by the number of steps", "steps", "gap")
        self.gap_plot.setLogMode(x=True)
        self.gap_plot.getAxis("bottom").setTicks([[(float(np.log10(k)), str(k)) for k in GAP_STEPS]])
        self.gap_plot.addItem(
            pg.InfiniteLine(0, angle=0, pen=pg.mkPen("#888888", style=pg.QtCore.Qt.PenStyle.DashLine))
        )
        self.gap_curve = self.gap_plot.plot(pen=pg.mkPen("#3d7bd9", width=2), symbol="o", symbolSize=6)
        self.summary = note(rich=True)
        controls = QFormLayout()
        controls.addRow("Steps", self.steps)
        controls.addRow("From", self.baseline)
        controls.addRow(self.settles)
        views = QVBoxLayout()
        views.addWidget(self.strips, 1)
        views.addWidget(self.gap_plot, 1)
        holder = QWidget()
        holder.setLayout(views)
        self.layout_with(
            "Gradient × input asks how the answer would move if each token's input grew a little. "
            "Integrated gradients adds those gradients up along the path from a baseline input to "
            "the real one, so the scores should add up to the answer's change.",
            controls,
            holder,
            (self.summary,),
        )

    def views(self) -> dict[str, QWidget]:
        return {"gradients": self.strips, "gap by steps": self.gap_plot}

    def script(self) -> Script:
        return scripts.gradients(self.state)

    def draw(self, r: WordsResult) -> Notice:
        rows = {"gradient × input": r.methods["gradxinput"], "integrated gradients": r.methods["ig"]}
        show(self.strips, rows, r.labels, signed=True)
        ig = r.ig
        start = "a zero input" if not self.state.baseline.strip() else f"{self.state.baseline!r} everywhere"
        self.summary.setText(
            f"{r.answer_text} = {r.metric:.4f}; from {start} it is {ig.baseline_metric:.4f}. The "
            f"{ig.steps} steps ({IG_RULE}) add up to {ig.scores.sum():.4f}: a completeness gap of "
            f"<b>{ig.gap:.4f}</b>. More steps close it only where the answer changes smoothly along "
            "the path. Every norm divides its input by its size, so even a tiny input is scaled "
            "back up: near the zero input the answer can jump within a sliver of the path, and "
            "a sum of a few dozen points misses such jumps by a different amount for every "
            "number of steps. " + self._settles(r)
        )
        return told(r.notices)

    def _settles(self, r: WordsResult) -> str:
        """The gap curve drawn, and what it says (or how to ask for it)."""
        if r.gaps is None:
            self.gap_curve.setData([], [])
            return "Tick the box to see whether the gap settles as the steps grow."
        done = ~np.isnan(r.gaps)
        self.gap_curve.setData(np.array(GAP_STEPS)[done], r.gaps[done])
        if not done.all():
            return f"The gap at {int(done.sum())} of {len(GAP_STEPS)} step counts so far."
        swing = float(np.abs(r.gaps[-3:]).max())
        verdict = (
            "it has settled"
            if swing < 0.05 * max(abs(r.metric - r.ig.baseline_metric), 1e-9)
            else "it has not settled, so their sum checks little here"
        )
        gaps = ", ".join(f"{g:.3g}" for g in r.gaps)
        return f"At {', '.join(map(str, GAP_STEPS))} steps the gap is {gaps}: {verdict}."
