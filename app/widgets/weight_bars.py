"""WeightBars: softmax weights as a bar chart with one bar highlighted."""

from __future__ import annotations

import numpy as np
import pyqtgraph as pg
from PySide6.QtWidgets import QVBoxLayout, QWidget

from app.widgets.plots import keep_plots_whole

TARGET_COLOR, OTHER_COLOR = "#ff8c00", "#3d7bd9"


class WeightBars(QWidget):
    """Weights over keys (here: stored patterns) as bars, one highlighted in orange with a dot on top
    so it stays visible among hundreds of thin bars. ``set_weights(weights (M,), highlight)``."""

    def __init__(self, title: str, x_label: str = "key"):
        super().__init__()
        self.plot = pg.PlotWidget(title=title)
        self.plot.setMouseEnabled(x=False, y=False)
        self.plot.setMenuEnabled(False)
        self.plot.hideButtons()
        self.plot.setLabel("bottom", x_label)
        self.plot.setLabel("left", "weight")
        self.plot.setYRange(0, 1.02, padding=0)
        self.others = pg.BarGraphItem(x=[], height=[], width=0.8, brush=OTHER_COLOR, pen=None)
        self.highlighted = pg.BarGraphItem(x=[], height=[], width=0.8, brush=TARGET_COLOR, pen=None)
        self.marker = pg.ScatterPlotItem(size=9, brush=TARGET_COLOR, pen=None)  # visible among many bars
        self.plot.addItem(self.others)
        self.plot.addItem(self.highlighted)
        self.plot.addItem(self.marker)
        keep_plots_whole(self.plot)  # its title and axis labels are never cut
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.plot)

    def set_weights(self, weights: np.ndarray, highlight: int) -> None:
        x = np.arange(weights.size)
        self.others.setOpts(x=x, height=weights)
        self.highlighted.setOpts(x=[highlight], height=[weights[highlight]])
        self.marker.setData([highlight], [weights[highlight]])
        self.plot.setXRange(-0.6, weights.size - 0.4, padding=0)
