"""The plot pieces the Scale panel's steps draw with."""

from __future__ import annotations

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import Qt

from app.widgets.plots import keep_plots_whole

ACCENT, SECOND, GUIDE = "#ff8c00", "#d62728", "#888888"


def add_plot(layout: pg.GraphicsLayoutWidget, title: str, x: str, y: str, row: int, col: int, **kw):
    """A fixed (no mouse) plot in a graphics layout, with axis labels and a faint y grid."""
    plot = layout.addPlot(row=row, col=col, title=title, **kw)
    plot.setLabel("bottom", x)
    plot.setLabel("left", y)
    plot.setMouseEnabled(x=False, y=False)
    plot.setMenuEnabled(False)
    plot.hideButtons()
    plot.showGrid(x=False, y=True, alpha=0.15)
    plot.getAxis("left").enableAutoSIPrefix(False)
    keep_plots_whole(layout)
    return plot


def log_x(plot: pg.PlotItem, ticks) -> None:
    """A logarithmic x axis labelled at ``ticks`` (plain numbers, not powers of ten)."""
    plot.setLogMode(x=True, y=False)
    plot.getAxis("bottom").setTicks([[(np.log10(t), f"{t:g}") for t in ticks], []])


CEILING_ROOM = 1.45  # the y range reaches this times ln(n): room above the ceiling for its label


def uniform_line() -> pg.InfiniteLine:
    """The dashed ceiling ln(n) that uniform attention reaches; its value is set later."""
    return pg.InfiniteLine(
        angle=0,
        pen=pg.mkPen(GUIDE, width=1.5, style=Qt.PenStyle.DashLine),
        label="uniform: ln n = {value:.3f}",
        labelOpts={"position": 0.35, "color": GUIDE, "anchors": [(0.5, 1.0), (0.5, 1.0)]},
    )


def marker() -> pg.ScatterPlotItem:
    return pg.ScatterPlotItem(size=13, brush=pg.mkBrush(ACCENT), pen=pg.mkPen("k", width=1), symbol="o")
