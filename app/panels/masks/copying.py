"""Step 4: copying the answer: in training, without a causal mask, each position can read the
very token it should predict."""

from __future__ import annotations

import numpy as np
import pyqtgraph as pg
from PySide6.QtWidgets import QCheckBox, QGridLayout, QWidget

from app.panels.masks import scripts
from app.panels.masks.state import MasksResult
from app.panels.scripts import Script
from app.panels.step import Live, Notice, Step
from app.widgets import Heatmap
from app.widgets.plots import plot, tick_label, title_across
from app.widgets.text import note
from core.maths import explain, masks


class CopyPage(Step):
    def __init__(self, live: Live):
        super().__init__(live)
        self.copy_box = self.bind(QCheckBox("Causal mask on"), "copy_causal")
        self.copy_map = Heatmap("Weights during training")
        self.copy_map.set_describer(lambda i, j: explain.weight(self.result.copy, i, j))
        self.copy_plot = plot("Weight each token puts on the next one", "", "weight", grid=False)
        self.copy_plot.setMouseEnabled(x=False, y=False)
        self.copy_plot.hideButtons()
        self.copy_plot.setYRange(0, 1, padding=0.02)
        self.copy_bars = pg.BarGraphItem(x=[0], height=[0], width=0.6, brush="#d9822b")
        self.copy_plot.addItem(self.copy_bars)
        title_across(self.copy_plot.getPlotItem())
        self.copy_note = note()
        grid = QGridLayout()
        grid.addWidget(self.copy_box, 0, 0)
        grid.addWidget(self.copy_note, 0, 1)
        grid.addWidget(self.copy_map, 1, 0)
        grid.addWidget(self.copy_plot, 1, 1)
        grid.setRowStretch(1, 1)
        self.layout_with(
            "In training every real (not padding) position predicts the token after it, all at "
            "once. Unmasked, that token can be read directly: the bars give each position's "
            "weight on it, the cell just right of the diagonal (the largest is outlined).",
            None,
            grid,
        )

    def views(self) -> dict[str, QWidget]:
        return {"copying_next_token": self.copy_plot, "copying": self.copy_map}

    def script(self) -> Script:
        return scripts.copying(self.state)

    def draw(self, r: MasksResult) -> Notice:
        n = r.copy.weights.shape[0]
        tokens = r.example.tokens[:n]
        self.copy_map.set_data(r.copy.weights, tokens, tokens, levels=(0.0, 1.0))
        if n < 2:
            self.copy_bars.setOpts(x=[], height=[])
            self.copy_note.setText("Needs two tokens that are not padding: one predicts the other.")
            self.copy_map.mark(None)
            return r.notice
        weights = masks.next_token_weight(r.copy.weights)
        self.copy_bars.setOpts(x=np.arange(n - 1), height=weights)
        stride = max(1, int(np.ceil((n - 1) / 12)))
        self.copy_plot.getAxis("bottom").setTicks(
            [[(i, tick_label(tokens[i])) for i in range(0, n - 1, stride)]]
        )
        self.copy_plot.setXRange(-0.6, n - 1.4, padding=0)
        top = int(np.argmax(weights))
        self.copy_map.mark(top, top + 1)
        state = "on: the answer is hidden" if r.state.copy_causal else "off"
        self.copy_note.setText(
            f"Causal mask {state}. Mean weight on the answer: {explain.num(weights.mean(), 3)}; "
            f"largest: {explain.num(weights[top], 3)} (“{tokens[top]}” → “{tokens[top + 1]}”, "
            "outlined)."
        )
        return r.notice
