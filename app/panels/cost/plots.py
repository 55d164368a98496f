"""What the Cost panel's log-log plots share: colours, curves and slope labels."""

from __future__ import annotations

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import Qt

from core.maths.complexity import loglog_slope

COLORS = ("#0072b2", "#d55e00", "#009e73", "#cc79a7", "#e69f00", "#56b4e9")  # Okabe–Ito


def curve(plot: pg.PlotWidget, name: str | None, color: str, style=Qt.PenStyle.SolidLine) -> pg.PlotDataItem:
    """A curve of ``plot``, named in its legend (None: not in it)."""
    return plot.plot([], [], name=name, pen=pg.mkPen(color, width=2.5, style=style))


def slope_label(plot: pg.PlotWidget, color: str, anchor=(0, 1)) -> pg.TextItem:
    """A text item for a curve's slope; anchor (0, 1) puts it above and right of its point."""
    label = pg.TextItem(color=color, anchor=anchor)
    plot.addItem(label)
    return label


def place_slope(label: pg.TextItem, x: list[int], y: list[int], at: int) -> None:
    """Write the local log-log slope of (x, y) at x = ``at`` beside the curve there."""
    k = x.index(at)
    slope = loglog_slope(x, y)[k]
    label.setText(f"slope {slope:.2f}")
    label.setPos(np.log10(at), np.log10(float(y[k])))
