"""Step 1: the same words in two orders; without positions attention only reorders."""

from __future__ import annotations

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QComboBox, QFormLayout, QHBoxLayout, QLineEdit, QWidget

from app.panels.position import scripts
from app.panels.position.state import ENCODINGS, OrderState, compute_order
from app.panels.scripts import Script
from app.panels.step import Live, Notice, Step
from app.widgets import Heatmap
from app.widgets.plots import keep_plots_whole, tick_label
from app.widgets.text import note
from core.maths import positional as pos


class OrderPage(Step):
    def __init__(self):
        super().__init__(Live(OrderState(), compute_order))
        s = self.state
        self.edit_a = self.bind(QLineEdit(s.sentence_a), "sentence_a")
        self.edit_b = self.bind(QLineEdit(s.sentence_b), "sentence_b")
        self.encoding = QComboBox()
        for key, (name, does) in ENCODINGS.items():
            self.encoding.addItem(name, key)
            self.encoding.setItemData(self.encoding.count() - 1, does, Qt.ItemDataRole.ToolTipRole)
        self.bind(self.encoding, "encoding")
        self.summary = note()
        controls = QFormLayout()
        controls.addRow("Position", self.encoding)
        self.map_a = Heatmap("Sentence A: weights", colorbar=False)
        self.map_b = Heatmap("Sentence B: weights")
        self.links = pg.PlotWidget(title="Where each word went")
        self.links.hideAxis("left")
        self.links.showAxis("top")
        self.links.setMouseEnabled(x=False, y=False)
        self.links.setMenuEnabled(False)
        self.links.hideButtons()
        self.links.setYRange(-0.05, 1.05, padding=0)
        self.link_lines = self.links.plot(pen=pg.mkPen("#888888", width=2), connect="pairs")
        self.link_lines.setSymbol("o")
        views = QHBoxLayout()
        for view, stretch in ((self.map_a, 3), (self.links, 2), (self.map_b, 3)):
            views.addWidget(view, stretch)
        for view in (self.map_a.view, self.links, self.map_b.view):
            keep_plots_whole(view)
        self.layout_with(
            "The same words in two orders, with the same embeddings and projections. Without "
            "position information each word keeps its weights on each partner; they are only "
            "listed in another order. Choose an encoding to break the tie.",
            controls,
            views,
            (self.summary,),
            wide=(("Sentence A", self.edit_a), ("Sentence B", self.edit_b)),
        )

    def views(self) -> dict[str, QWidget]:
        return {"order_a": self.map_a, "order_b": self.map_b}

    @property
    def trace(self) -> pos.PermutationTrace:
        return self.result

    def script(self) -> Script:
        return scripts.order(self.state)

    def draw(self, t: pos.PermutationTrace) -> Notice:
        self.map_a.set_data(t.a.weights, t.words_a, t.words_a, levels=(0.0, 1.0))
        self.map_b.set_data(t.b.weights, t.words_b, t.words_b, levels=(0.0, 1.0))
        n = len(t.words_a)
        for side, words in (("top", t.words_a), ("bottom", t.words_b)):
            self.links.getAxis(side).setTicks([[(k, tick_label(word)) for k, word in enumerate(words)]])
        x = np.column_stack([np.arange(n), t.where_in_b]).ravel().astype(float)
        y = np.tile([1.0, 0.0], n)
        self.link_lines.setData(x, y)
        self.links.setXRange(-0.5, n - 0.5, padding=0)
        same = t.difference < 1e-9
        self.summary.setText(
            f"Largest difference between A's weights and B's weights put back in A's order: "
            f"{t.difference:.1e}. "
            + (
                "The order is invisible: each word attends to each partner exactly as before."
                if same
                else "The order now changes what each word attends to."
            )
        )
        return None
