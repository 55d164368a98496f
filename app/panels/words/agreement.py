"""Step 4: do they agree? Spearman's rank correlation of every pair of methods on this prompt and,
when asked, over the built-in prompts (filled in prompt by prompt); and any two methods' scores
plotted against each other, one point per token."""

from __future__ import annotations

import numpy as np
import pyqtgraph as pg
from PySide6.QtWidgets import QCheckBox, QComboBox, QFormLayout, QGridLayout, QWidget

from app.panels.scripts import Script
from app.panels.step import Live, Notice, Step
from app.panels.words import scripts
from app.panels.words.state import NAMES, WordsResult
from app.panels.words.views import told
from app.widgets import Heatmap
from app.widgets.plots import plot
from app.widgets.reflow_grid import share_evenly
from app.widgets.text import note
from core.interp import token_scores as ts
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
        self.over_set = self.bind(
            QCheckBox(f"Also over the {len(ts.AGREEMENT_SET)} built-in prompts"), "over_set"
        )
        self.over_set.setToolTip("Names, facts, agreement and induction; each prompt takes seconds")
        self.matrix = Heatmap("Spearman's rank correlation", signed=True)
        self.set_matrix = Heatmap("Over the built-in prompts", signed=True)
        self.scatter = plot("One point per token", "", "")
        self.points = pg.ScatterPlotItem(size=9, brush="#3d7bd9", pen=None, hoverable=True)
        self.scatter.addItem(self.points)
        for side in ("bottom", "left"):
            self.scatter.getAxis(side).enableAutoSIPrefix(False)  # scores as they are, never "×0.001"
        self.summary = note(rich=True)
        controls = QFormLayout()
        controls.addRow("Across", self.across)
        controls.addRow("Up", self.up)
        controls.addRow(self.over_set)
        self.layout_with(
            "Each method ranks the tokens. Where two rankings agree the correlation is near 1; near "
            "0 they say unrelated things. Occlusion is the one that measures the answer directly.",
            controls,
            self._views(),
            (self.summary,),
        )

    def views(self) -> dict[str, QWidget]:
        return {"agreement": self.matrix, "agreement over the set": self.set_matrix, "scatter": self.scatter}

    def _views(self) -> QWidget:
        """The two matrices side by side, the scatter under them."""
        grid = QGridLayout()
        grid.addWidget(self.matrix, 0, 0)
        grid.addWidget(self.set_matrix, 0, 1)
        grid.addWidget(self.scatter, 1, 0, 1, 2)
        for row in (0, 1):  # half the height each
            grid.setRowStretch(row, 1)
        share_evenly((self.matrix, self.set_matrix))
        holder = QWidget()
        holder.setLayout(grid)
        return holder

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
            + ". "
            + self._over_set(r)
        )
        return told(r.notices)

    def _over_set(self, r: WordsResult) -> str:
        """The built-in prompts' matrix drawn, and what it says (or how to ask for it)."""
        names = [NAMES[m] for m in METHODS]
        done = r.over_set
        mean = done.mean if done is not None else np.full((len(names),) * 2, np.nan)
        self.set_matrix.set_data(mean, names, names, (-1.0, 1.0))
        total = len(ts.AGREEMENT_SET)
        counted = 0 if done is None else len(done.prompts)
        self.set_matrix.set_title(
            f"Over {counted} of {total} built-in prompts" if done else "Over the built-in prompts"
        )
        if done is None:
            return "One prompt is a small sample: tick the box to average over the built-in prompts."
        column = {m: mean[METHODS.index(m), METHODS.index("occlusion")] for m in METHODS[:-1]}
        best = max(column, key=column.get)
        so_far = "" if counted == total else f" so far ({counted} of {total} prompts)"
        return (
            f"Averaged over the built-in prompts{so_far}, {NAMES[best]} comes closest to occlusion "
            f"({column[best]:.2f}); "
            + ", ".join(f"{NAMES[m]} {v:.2f}" for m, v in column.items() if m != best)
            + "."
        )
