"""Step 5: induction heads in the real model, on random tokens repeated twice."""

from __future__ import annotations

import numpy as np
import pyqtgraph as pg
from PySide6.QtWidgets import QFormLayout, QHBoxLayout, QPushButton, QVBoxLayout, QWidget

from app.panels.inside_decoder import scripts
from app.panels.inside_decoder.knock_out import mode_box
from app.panels.inside_decoder.state import MAX_RANDOM, InductionResult, InductionState, compute_induction
from app.panels.inside_decoder.views import HeadMap, first_token_box, toggle_on_click
from app.panels.scripts import Script
from app.panels.step import Live, Notice, Step
from app.widgets.plots import plot
from app.widgets.spin_boxes import spin
from app.widgets.text import note

CLEAN, KNOCKED = "#3d7bd9", "#d62728"


class InductionPage(Step):
    def __init__(self):
        super().__init__(Live(InductionState(), compute_induction, background=True))
        s = self.state
        self.n = self.bind(spin(s.n, 2, MAX_RANDOM), "n")
        self.seed = self.bind(spin(s.seed, 0, 10_000), "seed")
        self.mode = self.bind(mode_box(), "mode")
        self.first = first_token_box(self)
        self.reset = QPushButton("Reset: every head back")
        self.summary = note()
        controls = QFormLayout()
        controls.addRow("Random tokens", self.n)
        controls.addRow("Seed", self.seed)
        controls.addRow("Ablation", self.mode)
        controls.addRow(self.first)
        controls.addRow(self.reset)
        self.induction_map = HeadMap("Induction score (click to knock out)")
        self.previous_map = HeadMap("Previous-token score")
        self.loss_plot = plot("Loss at each target", "target position", "loss (nats)")
        self.loss_plot.setMouseEnabled(x=False, y=False)
        self.loss_plot.addLegend(offset=(-8, 8))
        self.clean_line = self.loss_plot.plot(pen=pg.mkPen(CLEAN, width=2), name="every head")
        self.knocked_line = self.loss_plot.plot(pen=pg.mkPen(KNOCKED, width=2), name="crossed heads out")
        self.copy_line = pg.InfiniteLine(
            angle=90, pen=pg.mkPen("#888888", style=pg.QtCore.Qt.PenStyle.DashLine)
        )
        self.loss_plot.addItem(self.copy_line)
        self.copy_line.setValue(s.n - 0.5)  # before any result: the copy boundary, the targets' range
        self.loss_plot.setXRange(1, 2 * s.n - 1)
        self.loss_plot.setYRange(0, 16)
        maps = QHBoxLayout()
        maps.addWidget(self.induction_map)
        maps.addWidget(self.previous_map)
        column = QVBoxLayout()
        column.addLayout(maps, 3)
        column.addWidget(self.loss_plot, 2)
        views = QWidget()
        views.setLayout(column)
        self.layout_with(
            "Random tokens, then the same tokens again. The second copy can be predicted by "
            "copying from the first. Click heads with a high induction score to knock them out "
            "and watch the second copy's loss.",
            controls,
            views,
            (self.summary,),
        )
        for view in (self.induction_map, self.previous_map):
            toggle_on_click(view, self)
        self.reset.clicked.connect(lambda: self.apply(heads=()))

    def views(self) -> dict[str, QWidget]:
        return {"induction": self.induction_map, "previous": self.previous_map, "losses": self.loss_plot}

    def script(self) -> Script:
        return scripts.induction(self.state)

    def draw(self, r: InductionResult) -> Notice:
        test = r.clean
        self.induction_map.set_scores(test.induction, (0.0, 1.0))
        self.previous_map.set_scores(test.previous, (0.0, 1.0))
        knocked = r.ablated.heads if r.ablated is not None else ()
        for view in (self.induction_map, self.previous_map):
            view.set_knocked(knocked)
        x = np.arange(1, len(test.losses) + 1)
        self.loss_plot.enableAutoRange()  # fixed only while there is no result
        self.clean_line.setData(x, test.losses)
        self.knocked_line.setData(x, r.ablated.losses if r.ablated is not None else np.full(x.size, np.nan))
        self.copy_line.setValue(test.boundary)  # target n, the second copy's first, on its side
        best = np.unravel_index(int(np.argmax(test.induction)), test.induction.shape)
        text = (
            f"Loss on the first copy {test.loss_first:.2f} nats, on the second {test.loss_second:.2f}. "
            f"Strongest induction head: layer {best[0] + 1}, head {best[1] + 1} ({test.induction[best]:.2f})."
        )
        if r.ablated is not None:
            k = r.ablated
            text += (
                f" With {len(k.heads)} head(s) knocked out: first copy {k.loss_first:.2f}, "
                f"second copy {k.loss_second:.2f} nats."
            )
        self.summary.setText(text)
        return None
