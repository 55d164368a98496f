"""Heatmap: a matrix as coloured cells with token labels, fixed colour levels and a hover readout.

Rows are queries (labels on the left), columns are keys (labels on top), as the matrix is written.
Masked cells (−inf or NaN) are left uncoloured and read "−∞". The cells fill the room the view is
given: they ask for a line of text a side, and shrink to MIN_CELL_LINES of a line where the window
has no more room (their numbers are then hidden; the hover readout still tells). The numbers grow
with the cells (up to MAX_TEXT_SCALE times the text size).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QObject, QPointF, QRectF, QSize, Qt, Signal
from PySide6.QtGui import QColor, QFontMetrics, QPen
from PySide6.QtWidgets import QApplication, QGraphicsRectItem, QVBoxLayout, QWidget

from app.theme import style_plots
from app.widgets.colors import colormap, default_levels
from app.widgets.plots import keep_plots_whole, tick_label, title_across
from app.widgets.sizing import OwnHeight
from app.widgets.text import note
from app.widgets.tick_labels import fitting_labels, label_stride, stride
from core.maths.explain import num

MAX_CELL_TEXTS = 256  # numbers are written into the cells only up to this many cells
MAX_TICK_LABELS = 64  # more labels than this are thinned out so they stay readable
MAX_TEXT_SCALE = 2.0  # numbers in large cells are drawn up to this many times the text size
MIN_CELLS = 16  # the view asks for room for at least this many cells a side at the text's height
MIN_CELL_LINES = 0.5  # ... and makes do with cells this fraction of a line where room is short


class Heatmap(OwnHeight, QWidget):
    """``set_data(values, row_labels, col_labels, levels)``; hover shows ``describer(i, j)``.

    Tick labels are thinned out to what fits the view, and to at most max_ticks per axis (the
    hover readout still names every cell). ``row_ticks`` and ``col_ticks`` (set_data) label the
    axes in place of the readout's ``row_labels`` and ``col_labels`` (a token without its position
    number, a layer's number under an axis titled "layer": ``axis_titles``, which replace ``rows``
    and ``cols`` as the axes' titles, not in the readout).
    ``key_cols`` are the columns a step is about (Patching: the positions where the two prompts
    differ, and the last): they are labelled first, with a short label where the whole one does
    not fit, and every other column where its label fits between them. labels=False drops the
    tick labels and the readout line, for small multiples. ``rows`` and ``cols`` name what the
    rows and columns count (axis titles beside the tick labels, e.g. "layer" with rows labelled
    1, 2, 3).

    Signals: hovered(i, j) and clicked(i, j) with the cell under the mouse.

    The pyqtgraph plot (``plot_parts``) is built when the heatmap is first shown or a part is
    first used; data, levels and a title given before are shown once it is.
    """

    hovered = Signal(int, int)
    clicked = Signal(int, int)
    plot_parts = frozenset({"view", "plot", "image", "colorbar", "marker", "cells"})  # built by _build

    def __init__(
        self,
        title: str = "",
        signed: bool = False,
        colorbar: bool = True,
        cell_text: bool = True,
        max_ticks: int = MAX_TICK_LABELS,
        labels: bool = True,
        max_cell_texts: int = MAX_CELL_TEXTS,
        rows: str = "",
        cols: str = "",
        axis_titles: tuple[str, str] | None = None,
        parent=None,
    ):
        super().__init__(parent)
        self.signed, self.cell_text, self.max_ticks = signed, cell_text, max_ticks
        self.max_cell_texts = max_cell_texts
        self.names = (f"{rows} " if rows else "", f"{cols} " if cols else "")  # before a cell's labels
        self.values = np.zeros((0, 0))
        self.texts: list[str] | None = None  # written into the cells instead of the numbers
        self.levels = (0.0, 1.0)
        self.row_labels: list[str] = []
        self.col_labels: list[str] = []
        self.row_ticks: list[str] = []  # the row labels on the axis
        self.col_ticks: list[str] = []  # the column labels on the axis
        self.key_cols: dict[int, str] = {}  # labelled before any other column -> its short label
        self.describer: Callable[[int, int], str] | None = None
        self.ticks_key: tuple = ()  # labels and strides the axes show now
        self.widest: tuple = ((), np.zeros(0))  # ((font key, column labels), each label's pixels)
        self.options = (title, colorbar, labels, *(axis_titles or (rows, cols)))  # what _build needs
        self.viewport_watchers: list[QObject] = []  # event filters for the view's viewport
        self.readout = note(" ")  # names tokens, which may be long
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.readout)
        self.readout.setVisible(labels)

    def __getattr__(self, name: str):
        """The plot's parts are built when first shown or first asked for: a panel's hidden steps
        then cost nothing at start-up (a heatmap's plot takes about 17 ms to build)."""
        if name not in type(self).plot_parts:
            raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")
        self._build()
        return self.__dict__[name]

    @property
    def built(self) -> bool:
        return "view" in self.__dict__

    def watch_viewport(self, watcher: QObject) -> None:
        """Install ``watcher`` as an event filter on the view's viewport, now or once built."""
        if self.built:
            self.view.viewport().installEventFilter(watcher)
        else:
            self.viewport_watchers.append(watcher)

    def showEvent(self, event) -> None:
        if not self.built:
            self._build()
        super().showEvent(event)

    def _build(self) -> None:
        title, colorbar, labels, rows, cols = self.options
        self.view = pg.GraphicsLayoutWidget()
        self.plot = self.view.addPlot(title=title or None)
        self.plot.invertY(True)
        self.plot.setMouseEnabled(x=False, y=False)
        self.plot.setMenuEnabled(False)
        self.plot.hideButtons()
        self.plot.showAxis("top", labels)
        self.plot.showAxis("left", labels)
        self.plot.hideAxis("bottom")
        if labels:
            for side, name in (("left", rows), ("top", cols)):
                if name:
                    self.plot.setLabel(side, name)
        self.image = pg.ImageItem(axisOrder="row-major")
        self.image.setColorMap(colormap(self.signed))
        self.plot.addItem(self.image)
        self.colorbar = None
        if colorbar:
            self.colorbar = pg.ColorBarItem(colorMap=colormap(self.signed), interactive=False, width=14)
            self.colorbar.setImageItem(self.image, insert_in=self.plot)
        title_across(self.plot)
        self.marker = QGraphicsRectItem()
        self.marker.setPen(QPen(QColor("#ff8c00"), 0))
        self.marker.setZValue(10)
        self.marker.hide()
        self.plot.addItem(self.marker)
        self.cells = CellTexts()
        self.cells.setZValue(5)
        self.plot.addItem(self.cells)
        keep_plots_whole(self.view, lines=1)  # the title and tick labels are never cut
        self.layout().insertWidget(0, self.view, 1)
        if self.isVisible():  # else it shows with the heatmap (hiding it here would keep it hidden)
            self.view.show()
        self.layout().activate()  # the view gets its place now, before the first paint
        for watcher in self.viewport_watchers:
            self.view.viewport().installEventFilter(watcher)
        self.view.scene().sigMouseMoved.connect(self._on_move)
        self.view.scene().sigMouseClicked.connect(self._on_click)
        self.plot.vb.sigResized.connect(self._set_ticks)
        style_plots(self)  # in the theme of the moment
        if self.values.size:
            self._show_data(reshaped=True)

    def set_data(
        self,
        values: np.ndarray,
        row_labels: Sequence[str] | None = None,
        col_labels: Sequence[str] | None = None,
        levels: tuple[float, float] | None = None,
        texts: np.ndarray | None = None,
        row_ticks: Sequence[str] | None = None,
        col_ticks: Sequence[str] | None = None,
        key_cols: dict[int, str] | None = None,
    ) -> None:
        """Show ``values`` (n_rows, n_cols); −inf/NaN cells are drawn empty. ``texts`` (n_rows,
        n_cols) of str, when given, are written into the cells instead of the numbers.
        ``row_ticks``, ``col_ticks``: the labels on the axes (default: ``row_labels``,
        ``col_labels``, which the readout and exports use). ``key_cols``:
        column -> its short label, labelled first in this order; then every other one that fits."""
        values = np.asarray(values, dtype=np.float64)
        if values.ndim != 2:
            raise ValueError(f"A heatmap needs a 2-D matrix, got shape {values.shape}.")
        reshaped = values.shape != self.values.shape
        old_levels = self.levels
        self.values = values
        n, m = values.shape
        self.texts = None if texts is None else [str(t) for t in np.asarray(texts, dtype=object).ravel()]
        self.row_labels = list(row_labels) if row_labels is not None else [str(i) for i in range(n)]
        self.col_labels = list(col_labels) if col_labels is not None else [str(j) for j in range(m)]
        self.row_ticks = list(row_ticks) if row_ticks is not None else self.row_labels
        self.col_ticks = list(col_ticks) if col_ticks is not None else self.col_labels
        self.key_cols = {int(j): str(short) for j, short in (key_cols or {}).items() if 0 <= j < m}
        self.levels = levels if levels is not None else default_levels(values, self.signed)
        if not self.built:  # not built yet: shown when built
            self.updateGeometry()
            return
        self._show_data(reshaped, tuple(self.levels) != tuple(old_levels))

    def _show_data(self, reshaped: bool, new_levels: bool = True) -> None:
        """Hand the values, levels, labels and cell texts to the plot's parts."""
        n, m = self.values.shape
        shown = np.where(np.isfinite(self.values), self.values, np.nan)
        self.image.setImage(shown, autoLevels=False, levels=self.levels)
        self.image.setRect(QRectF(0, 0, m, n))
        if self.colorbar is not None and (reshaped or new_levels):
            self.colorbar.setLevels(self.levels)  # a new range makes its axis lay out again
        if reshaped:
            self.plot.setRange(xRange=(0, m), yRange=(0, n), padding=0.02)
            self.updateGeometry()
        self._set_ticks()  # after the range: key columns are placed where the cells are
        self._update_texts()

    def sizeHint(self) -> QSize:
        """Room for the cells (up to MIN_CELLS a side) as tall and wide as a line of text."""
        return super().sizeHint().expandedTo(self._cells(1.0))

    def minimumSizeHint(self) -> QSize:
        """Room for the cells (up to MIN_CELLS a side) MIN_CELL_LINES of a line a side, in height
        below the title and tick labels, in width within the whole (small multiples stand side by
        side): a window short of room hides the numbers rather than growing past the screen, and
        a short one scrolls rather than flattening the map."""
        hint, cells = super().minimumSizeHint(), self._cells(MIN_CELL_LINES)
        if not self.built:
            return hint.expandedTo(cells)
        below = max(cells.height() - math.floor(self.plot.getViewBox().minimumHeight()), 0)
        return QSize(max(hint.width(), cells.width()), hint.height() + below)

    def _cells(self, lines: float) -> QSize:
        side = lines * self.fontMetrics().height()
        n, m = (min(k, MIN_CELLS) for k in self.values.shape)
        return QSize(math.ceil(m * side), math.ceil(n * side))

    def clear(self) -> None:
        """Show no matrix, as before the first ``set_data`` (nothing to show yet)."""
        self.values = np.zeros((0, 0))
        self.row_labels, self.col_labels, self.key_cols = [], [], {}
        self.row_ticks, self.col_ticks = [], []
        self.readout.setText(" ")
        if not self.built:
            return
        self.image.clear()
        self.marker.hide()
        self._set_ticks()
        self._update_texts()

    def set_title(self, title: str) -> None:
        if not self.built:
            self.options = (title, *self.options[1:])
        elif title != self.plot.titleLabel.text:  # laying out the rich-text title is slow
            self.plot.setTitle(title)

    def set_describer(self, describer: Callable[[int, int], str] | None) -> None:
        """``describer(i, j)`` returns the hover text for a cell (e.g. its formula with numbers)."""
        self.describer = describer

    def mark(self, i: int | None, j: int | None = None, rows: int = 1, cols: int = 1) -> None:
        """Outline the block of ``rows`` × ``cols`` cells from (i, j), or whole rows from i when j is
        None; None hides the outline."""
        if i is None:
            self.marker.hide()
            return
        m = self.values.shape[1]
        rect = QRectF(0, i, m, rows) if j is None else QRectF(j, i, cols, rows)
        self.marker.setRect(rect)
        self.marker.show()

    def cell_at(self, scene_pos) -> tuple[int, int] | None:
        if not self.plot.vb.sceneBoundingRect().contains(scene_pos):
            return None
        p = self.plot.vb.mapSceneToView(scene_pos)
        i, j = int(np.floor(p.y())), int(np.floor(p.x()))
        n, m = self.values.shape
        return (i, j) if 0 <= i < n and 0 <= j < m else None

    def describe(self, i: int, j: int) -> str:
        """The readout text for cell (i, j)."""
        row, col = self.names
        head = f"[{row}{self.row_labels[i]} → {col}{self.col_labels[j]}] = {num(self.values[i, j], 4)}"
        return f"{head}    {self.describer(i, j)}" if self.describer else head

    def _on_move(self, scene_pos) -> None:
        cell = self.cell_at(scene_pos)
        if cell is not None:
            self.readout.setText(self.describe(*cell))
            self.hovered.emit(*cell)

    def _on_click(self, event) -> None:
        cell = self.cell_at(event.scenePos())
        if cell is not None:
            self.clicked.emit(*cell)

    def _set_ticks(self) -> None:
        """Label rows and columns evenly: as many as have room at the current size and font,
        and at most max_ticks.

        The axes are only given new ticks when the labels or the thinning change, since new
        ticks make them lay out again.
        """
        font = self.plot.getAxis("top").style.get("tickFont") or self.font()
        metrics = QFontMetrics(font)
        size = self.plot.vb.size()
        if self.widest[0] != (font.key(), self.col_ticks):  # measuring 500 labels takes ~6 ms
            widths = [metrics.horizontalAdvance(tick_label(c)) for c in self.col_ticks]
            self.widest = ((font.key(), self.col_ticks), np.array(widths, dtype=float))
        n, m = len(self.row_labels), len(self.col_labels)
        cap = (max(1, int(np.ceil(n / self.max_ticks))), max(1, int(np.ceil(m / self.max_ticks))))
        row_stride = max(cap[0], stride(n, size.height(), metrics.height()))
        gap = metrics.averageCharWidth()
        if self.key_cols:
            x0, x1 = self.plot.vb.viewRange()[0]
            cell = size.width() / (x1 - x0) if x1 > x0 else 0.0
            centres = (np.arange(m) + 0.5 - x0) * cell
            reach = self._label_reach()
            room = (-reach, size.width() + reach)
            short = {k: (text, metrics.horizontalAdvance(text)) for k, text in self.key_cols.items()}
            labels = [tick_label(c) for c in self.col_ticks]
            columns = fitting_labels(labels, self.widest[1], centres, room, gap, short, self.max_ticks)
        else:
            col_stride = max(cap[1], label_stride(self.widest[1], size.width(), gap))
            columns = tuple((k, tick_label(self.col_ticks[k])) for k in range(0, m, col_stride))
        key = (self.row_ticks, self.col_ticks, row_stride, columns)
        if key == self.ticks_key:
            return
        self.ticks_key = key
        rows = [[(k + 0.5, tick_label(self.row_ticks[k])) for k in range(0, n, row_stride)]]
        self.plot.getAxis("left").setTicks(rows)
        self.plot.getAxis("top").setTicks([[(k + 0.5, text) for k, text in columns]])

    def _label_reach(self) -> float:
        """Pixels a column label may reach past the cells' ends: over the row labels' corner on
        the left, over the colour bar's on the right (pyqtgraph drops a label that reaches
        further), the narrower of the two."""
        top = self.plot.getAxis("top")
        beside = self.plot.getAxis("left").width() if self.plot.getAxis("left").isVisible() else 0.0
        right = self.colorbar.width() if self.colorbar is not None else 0.0
        reach = max(0.0, min(beside, right))
        if top.style["hideOverlappingLabels"] != int(reach):
            top.setStyle(hideOverlappingLabels=int(reach))
        return float(int(reach))

    def _update_texts(self) -> None:
        """Write the numbers into the cells (small matrices only), in black or white for contrast."""
        n, m = self.values.shape
        if not (self.cell_text and n * m <= self.max_cell_texts):
            self.cells.set_cells([], [], (0, 0))
            return
        lo, hi = self.levels
        frac = np.clip((np.nan_to_num(self.values, neginf=lo, posinf=hi) - lo) / (hi - lo or 1), 0, 1)
        rgb = colormap(self.signed).map(frac.ravel(), mode="byte")[:, :3]
        dark = rgb @ np.array([0.2126, 0.7152, 0.0722]) > 127
        finite = np.isfinite(self.values.ravel())
        colors = [
            QColor("#000000" if d else "#ffffff") if f else QColor("#888888")
            for d, f in zip(dark, finite, strict=True)
        ]
        texts = self.texts if self.texts is not None else [num(v) for v in self.values.ravel()]
        self.cells.set_cells(texts, colors, (n, m))


class CellTexts(pg.GraphicsObject):
    """All the numbers of a heatmap in one item, drawn at screen size whatever the zoom."""

    def __init__(self):
        super().__init__()
        self.texts: list[str] = []
        self.colors: list[QColor] = []
        self.grid = (0, 0)  # (rows, columns); not "shape", which would hide QGraphicsItem.shape()
        self.widest: tuple[str, int] = ("", 0)  # (font key, pixels of the widest text in that font)

    def set_cells(self, texts: list[str], colors: list[QColor], shape: tuple[int, int]) -> None:
        self.prepareGeometryChange()
        self.texts, self.colors, self.grid = texts, colors, shape
        self.widest = ("", 0)
        self.update()

    def _widest(self, font) -> int:
        """The widest text's pixels in ``font``, measured once per texts and font (500 texts: ~2 ms)."""
        if self.widest[0] != font.key():
            metrics = QFontMetrics(font)
            self.widest = (font.key(), max(metrics.horizontalAdvance(t) for t in self.texts))
        return self.widest[1]

    def boundingRect(self) -> QRectF:
        return QRectF(0, 0, self.grid[1], self.grid[0])

    def paint(self, painter, *_args) -> None:
        m = self.grid[1]
        if not self.texts:
            return
        to_screen = painter.transform()
        painter.resetTransform()
        font = QApplication.font()
        if self._exportOpts:  # an image export at another resolution: the numbers grow with it
            font.setPointSizeF(font.pointSizeF() * self._exportOpts.get("resolutionScale", 1.0))
        corner = to_screen.map(QPointF(0, 0))
        step = to_screen.map(QPointF(1, 1)) - corner
        w, h = abs(step.x()), abs(step.y())
        metrics = QFontMetrics(font)
        widest = self._widest(font)
        if widest > w or metrics.height() > h:
            return  # cells too small for their numbers: colours only (the hover readout still tells)
        scale = min(MAX_TEXT_SCALE, 0.85 * w / max(widest, 1), 0.8 * h / metrics.height())
        font.setPointSizeF(font.pointSizeF() * scale)
        painter.setFont(font)
        for k, (text, color) in enumerate(zip(self.texts, self.colors, strict=True)):
            centre = to_screen.map(QPointF(k % m + 0.5, k // m + 0.5))
            painter.setPen(color)
            painter.drawText(
                QRectF(centre.x() - w / 2, centre.y() - h / 2, w, h), Qt.AlignmentFlag.AlignCenter, text
            )
