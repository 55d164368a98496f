"""Step 4: do they agree? Spearman's rank correlation of every pair of methods on this prompt, and
any two methods' scores plotted against each other, one point per token."""

from __future__ import annotations

import pyqtgraph as pg
from PySide6.QtWidgets import QComboBox, QFormLayout

from app.panels.scripts import Script
from app.panels.step import Live, Notice, Step
from app.panels.words import scripts
from app.panels.words.state import NAMES, WordsResult
from app.panels.words.views import told
from app.widgets import Heatmap
from app.widgets.plots import plot
from app.widgets.reflow_grid import side_by_side
from app.widgets.text import note
from core.interp.token_scores import METHODS


def method_box() -> QComboBox:
    box = QComboBox()
    for key in METHODS:
        box.addItem(NAMES[key], key)
    return box


class AgreementPage(Step):
    def __init__(self, live: Live):
        super().__init__(live)
        self.across = method_box()
        self.up = method_box()
        self.bind(self.across, "x")
        self.bind(self.up, "y")
        self.matrix = Heatmap("Spearman's rank correlation", signed=True)
        self.scatter = plot("One point per token", "", "")
        self.points = pg.ScatterPlotItem(size=9, brush="#3d7bd9", pen=None, hoverable=True)
        self.scatter.addItem(self.points)
        for side in ("bottom", "left"):
            self.scatter.getAxis(side).enableAutoSIPrefix(False)  # scores as they are, never "×0.001"
        self.summary = note(rich=True)
        controls = QFormLayout()
        controls.addRow("Across", self.across)
        controls.addRow("Up", self.up)
        self.layout_with(
            "Each method ranks the tokens. Where two rankings agree the correlation is near 1; near "
            "0 they say unrelated things. Occlusion is the one that measures the answer directly.",
            controls,
            side_by_side(self.matrix, self.scatter),
            (self.summary,),
        )

    def script(self) -> Script:
        return scripts.agreement(self.state)

    def draw(self, r: WordsResult) -> Notice:
        names = [NAMES[m] for m in METHODS]
        self.matrix.set_data(r.agreement, names, names, (-1.0, 1.0))
        x, y = r.methods[self.state.x], r.methods[self.state.y]
        self.points.setData(x, y, data=list(r.labels), tip=lambda x, y, data: f"{data}: {x:.3g}, {y:.3g}")
        self.scatter.setLabel("bottom", NAMES[self.state.x])
        self.scatter.setLabel("left", NAMES[self.state.y])
        with_occlusion = {m: r.agreement[METHODS.index(m), METHODS.index("occlusion")] for m in METHODS[:-1]}
        best = max(with_occlusion, key=with_occlusion.get)
        self.summary.setText(
            f"On this prompt, {NAMES[best]} ranks the tokens most like occlusion "
            f"({with_occlusion[best]:.2f}); "
            + ", ".join(f"{NAMES[m]} {v:.2f}" for m, v in with_occlusion.items() if m != best)
            + ". One prompt is a small sample: try others."
        )
        return told(r.notices)
