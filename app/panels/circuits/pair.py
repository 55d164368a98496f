"""Step 1: the clean and the corrupted prompt (Patching's pair editor and presets), as the
tokenizer splits them, and the metric of each run."""

from __future__ import annotations

import pyqtgraph as pg
from PySide6.QtWidgets import QFormLayout, QWidget

from app.panels.circuits import scripts
from app.panels.circuits.state import CircuitResult
from app.panels.pair_step import PairStep, metrics_html, pair_html
from app.panels.scripts import Script
from app.panels.step import Live, Notice
from app.widgets.plots import plot
from app.widgets.text import note


class PairPage(PairStep):
    def __init__(self, live: Live):
        super().__init__(live)
        self.tokens = note(rich=True)
        self.metrics = note(rich=True)
        self.bars_view = plot("Both runs", "", "logit(target) − logit(foil)")
        self.bars = pg.BarGraphItem(x=[0, 1], height=[0, 0], width=0.6, brushes=["#d62728", "#1f77b4"])
        self.bars_view.addItem(self.bars)
        self.bars_view.getPlotItem().getAxis("bottom").setTicks([[(0, "clean run"), (1, "corrupted run")]])
        controls = QFormLayout()
        self.add_pair_rows(controls)
        self.layout_with(
            "The same pair as in Patching: a clean prompt and a corrupted one of as many tokens. An "
            "edge's score says how much of the way from the corrupted metric (0) to the clean one (1) "
            "patching that one connection would bring back.",
            controls,
            self.bars_view,
            (self.tokens, self.metrics),
            wide=self.pair_wide,
        )

    def views(self) -> dict[str, QWidget]:
        return {"runs": self.bars_view}

    def script(self) -> Script:
        return scripts.pair(self.state)

    def draw(self, r: CircuitResult) -> Notice:
        self.tokens.setText(pair_html(r.pair))
        ends = r.scores.ends
        self.metrics.setText(metrics_html(r.pair, ends.clean.metric, ends.corrupt.metric))
        self.bars.setOpts(height=[ends.clean.metric, ends.corrupt.metric])
        return None
