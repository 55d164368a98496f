"""TokenBars: candidate next tokens as horizontal probability bars, most probable on top.

``set_bars(labels, probs, kept, rest)``: tokens that sampling cuts are grey; the probability of
every other token is one more bar, "(rest)". Clicking a token's bar emits ``clicked(index)``.
The probability axis ends at 1 at most: a bar's value is written after its end, or inside it
where the room after it is too short for the text.
"""

from __future__ import annotations

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import Signal
from PySide6.QtGui import QFontMetrics
from PySide6.QtWidgets import QVBoxLayout, QWidget

from app.widgets.plots import keep_plots_whole, tick_label, title_across

KEPT, CUT, REST = "#3d7bd9", "#b9b9b9", "#e0c08a"
VALUE, ON_KEPT, ON_PALE = "#666666", "#ffffff", "#333333"  # a value's colour beside a bar, inside one
VALUE_MARGIN = 4  # pixels between a value and its bar's end


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
        self.shown: list[tuple[float, str]] = []  # each bar's (probability, brush)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.plot)
        self.plot.scene().sigMouseClicked.connect(self._on_click)
        self.plot.getViewBox().sigResized.connect(self._place_values)

    def clear(self) -> None:
        """No bars, as before the first ``set_bars``."""
        self.count = 0
        self.bars.setOpts(x0=[], y=[], width=[], brushes=[])
        self.plot.getAxis("left").setTicks([[]])
        self._drop_values()
        self.shown = []

    def _drop_values(self) -> None:
        for item in self.values:
            self.plot.removeItem(item)
        self.values = []

    def set_bars(self, labels: list[str], probs, kept, rest: float) -> None:
        probs = np.asarray(probs, dtype=float)
        self.count = len(labels)
        widths = [*probs, rest]
        brushes = [KEPT if k else CUT for k in kept] + [REST]
        y = np.arange(len(widths))
        self.bars.setOpts(x0=np.zeros(len(widths)), y=y, width=widths, brushes=brushes)
        axis = self.plot.getAxis("left")
        axis.setTicks([[(i, tick_label(text)) for i, text in enumerate([*labels, "(rest)"])]])
        self._drop_values()
        for i, p in enumerate(widths):
            item = pg.TextItem(f"{p:.1%}", anchor=(0, 0.5), color=VALUE)
            item.setPos(p, i)
            self.plot.addItem(item)
            self.values.append(item)
        self.shown = list(zip(widths, brushes, strict=True))
        self.plot.setYRange(-0.6, len(widths) - 0.4, padding=0)
        if self.room.lines != len(widths):  # a text line for every bar's label
            self.room.lines = len(widths)
            self.room.fit()
        # probabilities end at 1; below that, a quarter more than the longest bar for its value
        self.plot.setXRange(0, min(1.0, max(0.1, max(widths) * 1.25)), padding=0)
        self._place_values()

    def _place_values(self) -> None:
        """Each value after its bar's end, or inside the bar where the room after it is short."""
        view = self.plot.getViewBox()
        end = view.viewRange()[0][1]
        per_pixel = end / view.width() if view.width() > 0 else 0.0
        for item, (p, brush) in zip(self.values, self.shown, strict=True):
            pixels = QFontMetrics(item.textItem.font()).horizontalAdvance(item.toPlainText()) + VALUE_MARGIN
            inside = per_pixel > 0 and p + pixels * per_pixel > end and p > pixels * per_pixel
            item.setAnchor((1, 0.5) if inside else (0, 0.5))
            item.setColor((ON_KEPT if brush == KEPT else ON_PALE) if inside else VALUE)

    def _on_click(self, event) -> None:
        point = self.plot.getViewBox().mapSceneToView(event.scenePos())
        i = round(point.y())
        if 0 <= i < self.count and point.x() >= 0:
            self.clicked.emit(i)
