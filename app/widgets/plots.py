"""Plot factories every panel shares: a titled plot with axis labels, and a log-log plot against n;
and PlotRoom, which makes a plot view ask Qt's layouts for the room its plots need."""

from __future__ import annotations

import math

import pyqtgraph as pg
from PySide6.QtCore import QEvent, QObject, QSize, Qt


def plot(title: str, x: str = "", y: str = "", grid: bool = True) -> pg.PlotWidget:
    """A titled plot with axis labels and (unless ``grid`` is False) a light grid."""
    view = pg.PlotWidget(title=title)
    if x:
        view.setLabel("bottom", x)
    if y:
        view.setLabel("left", y)
    if grid:
        view.showGrid(x=True, y=True, alpha=0.25)
    view.setMenuEnabled(False)
    return view


def loglog_plot(
    title: str, y: str, x: str = "sequence length n (tokens)", legend_at=(-8, -8)
) -> pg.PlotWidget:
    """A log-log plot with plain (not SI-prefixed) tick labels and a legend at ``legend_at``
    (pixels; negative: from the right or bottom)."""
    view = plot(title, x, y)
    view.setLogMode(x=True, y=True)
    for side in ("left", "bottom"):
        view.getAxis(side).enableAutoSIPrefix(False)
    view.addLegend(offset=legend_at)
    return view


class PlotRoom(QObject):
    """Keeps a plot view's minimum size at what its plots need: titles, axes and their labels at
    the current text size. Qt's layouts do not look inside a QGraphicsView, so without this a view
    can be given less room than its plots need and draws them cut off at its edge.

    A filter on the view's top graphics item: pyqtgraph posts a layout request to it whenever a
    title, label, tick or font changes what its plots need."""

    def __init__(self, view: pg.GraphicsView):
        super().__init__(view)
        self.view = view
        view.centralWidget.installEventFilter(self)
        self.fit()

    def eventFilter(self, item, event: QEvent) -> bool:
        if event.type() == QEvent.Type.LayoutRequest:
            self.fit()
        return False

    def fit(self) -> None:
        least = self.view.centralWidget.effectiveSizeHint(Qt.SizeHint.MinimumSize)
        frame = 2 * self.view.frameWidth()
        size = QSize(math.ceil(least.width()) + frame, math.ceil(least.height()) + frame)
        if self.view.minimumSize() != size:
            self.view.setMinimumSize(size)


def keep_plots_whole(view: pg.GraphicsView) -> None:
    """Give ``view`` a PlotRoom, once."""
    if view.findChild(PlotRoom) is None:
        PlotRoom(view)
