"""TokenBars: candidate next tokens as horizontal probability bars, most probable on top.

``set_bars(labels, probs, kept, rest)``: tokens that sampling cuts are grey; the probability of
every other token is one more bar, "(rest)". Clicking a token's bar emits ``clicked(index)``.
"""

from __future__ import annotations

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import Signal
from PySide6.QtWidgets import QVBoxLayout, QWidget

from app.widgets.plots import keep_plots_whole, tick_label, title_across

KEPT, CUT, REST = "#3d7bd9", "#b9b9b9", "#e0c08a"


class TokenBars(QWidget):
    clicked = Signal(int)

    def __init__(self, title: str = ""):
        super().__init__()
        self.count = 0
        self.plot = pg.PlotWidget(title=title or None)
        self.plot.setMouseEnabled(x=False, y=False)
        self.plot.setMenuEnabled(False)
        self.plot.hideButtons()
        self.plot.invertY(True)
        self.plot.setLabel("bottom", "probability")
        self.plot.getAxis("bottom").enableAutoSIPrefix(False)  # 0.1 … 0.4, never "×0.001"
        self.plot.setXRange(0, 1, padding=0.02)
        title_across(self.plot.getPlotItem())
        self.room = keep_plots_whole(self.plot)
        self.bars = pg.BarGraphItem(x0=[], y=[], height=0.7, width=[], brushes=[], pen=None)
        self.plot.addItem(self.bars)
        self.values: list[pg.TextItem] = []
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.plot)
        self.plot.scene().sigMouseClicked.connect(self._on_click)

    def set_bars(self, labels: list[str], probs, kept, rest: float) -> None:
        probs = np.asarray(probs, dtype=float)
        self.count = len(labels)
        widths = [*probs, rest]
        brushes = [KEPT if k else CUT for k in kept] + [REST]
        y = np.arange(len(widths))
        self.bars.setOpts(x0=np.zeros(len(widths)), y=y, width=widths, brushes=brushes)
        axis = self.plot.getAxis("left")
        axis.setTicks([[(i, tick_label(text)) for i, text in enumerate([*labels, "(rest)"])]])
        for item in self.values:
            self.plot.removeItem(item)
        self.values = []
        for i, p in enumerate(widths):
            item = pg.TextItem(f"{p:.1%}", anchor=(0, 0.5), color="#666666")
            item.setPos(p, i)
            self.plot.addItem(item)
            self.values.append(item)
        self.plot.setYRange(-0.6, len(widths) - 0.4, padding=0)
        if self.room.lines != len(widths):  # a text line for every bar's label
            self.room.lines = len(widths)
            self.room.fit()
        self.plot.setXRange(0, max(0.1, min(1.15, max(widths) * 1.25)), padding=0)  # room for the text

    def _on_click(self, event) -> None:
        point = self.plot.getViewBox().mapSceneToView(event.scenePos())
        i = round(point.y())
        if 0 <= i < self.count and point.x() >= 0:
            self.clicked.emit(i)
