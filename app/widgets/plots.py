"""Plot factories every panel shares: a titled plot with axis labels, and a log-log plot against n;
and PlotRoom, which makes a plot view ask Qt's layouts for the room its plots need."""

from __future__ import annotations

import math

import pyqtgraph as pg
from PySide6.QtCore import QEvent, QObject, QSize, Qt
from PySide6.QtGui import QFontMetrics

MIN_PLOT_LINES = 4  # a plot's data area is at least this many lines of text tall


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
    keep_plots_whole(view)
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


def title_across(plot: pg.PlotItem) -> None:
    """Let ``plot``'s title span its axes (and a colour bar) too, not only the data area: a title
    wider than the data then does not widen the view by the axes' width on top."""
    grid = plot.layout
    grid.removeItem(plot.titleLabel)
    grid.addItem(plot.titleLabel, 0, 0, 1, grid.columnCount())


class PlotRoom(QObject):
    """Keeps a plot view's minimum size at what its plots need: titles, axes and their labels at
    the current text size. Qt's layouts do not look inside a QGraphicsView, so without this a view
    can be given less room than its plots need and draws them cut off at its edge.

    A filter on the view's top graphics item: pyqtgraph posts a layout request to it whenever a
    title, label, tick or font changes what its plots need."""

    def __init__(self, view: pg.GraphicsView, lines: int = MIN_PLOT_LINES):
        super().__init__(view)
        self.view, self.lines = view, lines  # lines: see fit_view_box
        view.centralWidget.installEventFilter(self)
        self.fit()

    def eventFilter(self, item, event: QEvent) -> bool:
        if event.type() == QEvent.Type.LayoutRequest:
            self.fit()
        return False

    def fit(self) -> None:
        for item in self.view.scene().items():
            if isinstance(item, pg.PlotItem):
                fit_view_box(item, self.lines)
        least = self.view.centralWidget.effectiveSizeHint(Qt.SizeHint.MinimumSize)
        frame = 2 * self.view.frameWidth()
        size = QSize(math.ceil(least.width()) + frame, math.ceil(least.height()) + frame)
        if self.view.minimumSize() != size:
            self.view.setMinimumSize(size)


def fit_view_box(plot: pg.PlotItem, lines: int = MIN_PLOT_LINES) -> None:
    """Keep ``plot``'s data area at least as long as its axis labels along each side, and at
    least ``lines`` lines of text tall: a squeezed plot cuts its labels and shows no data."""
    line = QFontMetrics(plot.titleLabel.item.font()).height()
    wide, tall = 0.0, lines * line
    for side in ("left", "right", "top", "bottom"):
        axis = plot.getAxis(side)
        if axis.isVisible() and axis.label.isVisible() and axis.labelText:
            margin = 2 * axis.label.document().documentMargin()
            length = axis.label.boundingRect().width() - margin
            if side in ("left", "right"):
                tall = max(tall, length)
            else:
                wide = max(wide, length)
    vb = plot.getViewBox()
    if (vb.minimumWidth(), vb.minimumHeight()) != (wide, tall):
        vb.setMinimumSize(wide, tall)


def keep_plots_whole(view: pg.GraphicsView, lines: int = MIN_PLOT_LINES) -> PlotRoom:
    """``view``'s PlotRoom (data areas at least ``lines`` lines of text tall), made the first time."""
    room = view.findChild(PlotRoom)
    return room if room is not None else PlotRoom(view, lines)
