"""Plot factories every panel shares: a titled plot with axis labels, and a log-log plot against n;
PlotRoom, which makes a plot view ask Qt's layouts for the room its plots need and keeps its tick
labels apart (spaced_ticks); WrappedTitle, which lets a plot's title take more lines instead of
widening the plot; and LegendBelow, a legend under the axes that never covers the curves.

Token tick labels are cut at 24 characters (tick_label; hover readouts name tokens whole), and
captions drawn in data units share one size that fits their room and never exceeds the text size
(place_captions)."""

from __future__ import annotations

import math
from collections.abc import Sequence

import pyqtgraph as pg
from PySide6.QtCore import QEvent, QObject, QRectF, QSize, QSizeF, Qt
from PySide6.QtGui import QBrush, QFont, QFontMetrics, QFontMetricsF, QPalette, QTextOption, QTransform
from PySide6.QtWidgets import QApplication, QGraphicsSimpleTextItem

MIN_PLOT_LINES = 4  # a plot's data area is at least this many lines of text tall
SPACED = "spaced_ticks"  # attribute of an axis whose tick labels are kept apart
TICK_CHARS = 24  # a token's tick label shows at most this many characters


def tick_label(text: str) -> str:
    """A token as a tick label: cut to TICK_CHARS characters with an ellipsis. A pasted word of
    thousands of characters would otherwise make its axis, and the window, as wide (the views'
    hover readouts still name it whole)."""
    return text if len(text) <= TICK_CHARS else text[: TICK_CHARS - 1] + "…"


def spaced_ticks(axis: pg.AxisItem) -> None:
    """Keep ``axis``'s tick labels from overlapping (large text on a narrow plot or a short colour
    bar: pyqtgraph labels every top-level tick, and lower levels by how much text there is, not
    where it falls). Labels are kept level by level, in order; one that would touch a kept one is
    dropped, its tick mark stays. Wraps the axis's own method, so any axis can have it."""
    draw = axis.generateDrawSpecs

    def generate(painter):
        specs = draw(painter)
        if specs is None:
            return None
        line, ticks, texts = specs
        gap = QFontMetricsF(axis.style["tickFont"] or axis.font()).averageCharWidth() / 2
        kept = []
        for rect, flags, text in texts:
            if not any(rect.adjusted(-gap, -gap, gap, gap).intersects(other) for other, _, _ in kept):
                kept.append((rect, flags, text))
        return line, ticks, kept

    axis.generateDrawSpecs = generate
    setattr(axis, SPACED, True)


def place_captions(
    items: Sequence[QGraphicsSimpleTextItem],
    texts: Sequence[str],
    font: QFont,
    centres: Sequence[tuple[float, float]],
    box: QSizeF,
    view: pg.ViewBox,
    flip: bool = False,
) -> None:
    """Write ``texts`` into ``items`` (text items in ``view``'s data coordinates), each centred on
    its point of ``centres``, at one common size: the largest at which every text fits ``box``
    (data units), and no larger than ``font`` on screen. They shrink with the data they name, so
    at any text size or view size they never overlap a neighbour; call again when the view's
    scale changes (sigTransformChanged). ``flip``: the view's y axis points up."""
    metrics = QFontMetricsF(font)
    sizes = [metrics.boundingRect(QRectF(0, 0, 1e6, 1e6), 0, text).size() for text in texts]
    pixel = view.viewPixelSize()[0]  # data units per screen pixel: the font's own size at most
    scale = min(
        (min(box.width() / max(size.width(), 1.0), box.height() / max(size.height(), 1.0)) for size in sizes),
        default=1.0,
    )
    scale = min(scale, pixel) if pixel > 0 else scale
    brush = QBrush(QApplication.palette().color(QPalette.ColorRole.Text))
    for item, text, size, (x, y) in zip(items, texts, sizes, centres, strict=True):
        item.setText(text)
        item.setFont(font)
        item.setBrush(brush)
        item.setTransform(QTransform.fromScale(scale, -scale if flip else scale))
        half = size.height() * scale / 2
        item.setPos(x - size.width() * scale / 2, y + half if flip else y - half)


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


def loglog_plot(title: str, y: str, x: str = "length n (tokens)", legend_at=(-8, -8)) -> pg.PlotWidget:
    """A log-log plot with plain (not SI-prefixed) tick labels and a legend at ``legend_at``
    (pixels; negative: from the right or bottom)."""
    view = plot(title, x, y)
    view.setLogMode(x=True, y=True)
    for side in ("left", "bottom"):
        view.getAxis(side).enableAutoSIPrefix(False)
    view.addLegend(offset=legend_at)
    return view


def share_plot(title: str, x: str, y: str, counts) -> pg.PlotWidget:
    """Shares from 0 to 1 against a count on a log axis ticked at ``counts``, with a legend (the
    Memory panel's capacity, the Linear attention panel's recall)."""
    view = plot(title, x, y, False)
    view.setLogMode(x=True, y=False)
    view.setMouseEnabled(x=False, y=False)
    view.hideButtons()
    view.setYRange(0, 1.02, padding=0)
    view.addLegend(offset=(-10, 10))
    count_ticks(view, counts)
    return view


def count_ticks(view: pg.PlotWidget, counts) -> None:
    """Tick a log x axis at ``counts`` (increasing) and show just their span."""
    view.setXRange(math.log10(counts[0]), math.log10(counts[-1]), padding=0.03)
    view.getAxis("bottom").setTicks([[(math.log10(m), str(m)) for m in counts]])


def dashed_line(x: float, label: str) -> pg.InfiniteLine:
    """A labelled, dashed vertical line at ``x`` (in the axis' own units, log10 on a log axis)."""
    return pg.InfiniteLine(
        pos=x,
        angle=90,
        pen=pg.mkPen("#888888", style=Qt.PenStyle.DashLine),
        label=label,
        labelOpts={"position": 0.3, "color": "#555555"},
    )


def legend_lines(view: pg.PlotWidget, curve: pg.PlotDataItem, *lines: str) -> None:
    """Name ``curve`` in ``view``'s legend on ``lines``, so the legend fits a narrow plot at large
    text; the curve keeps its own one-line name."""
    view.getPlotItem().legend.getLabel(curve).setText("<br>".join(lines))


class LegendBelow(pg.LegendItem):
    """A legend in its own row under a plot's x axis, so it never covers the curves: its entries
    take as few rows as fit the width the plot's layout gives it, spread evenly over the columns."""

    def updateSize(self) -> None:
        """The plot's layout sizes it (pyqtgraph's own would move it to the plot's corner)."""
        self.updateGeometry()

    def sizeHint(self, which, constraint=None):
        hint = super().sizeHint(which, constraint)
        if which == Qt.SizeHint.MinimumSize and self.items:  # as narrow as its widest entry
            return QSizeF(max(self.entry_width(k) for k in range(len(self.items))), hint.height())
        return hint

    def entry_width(self, k: int) -> float:
        """Pixels that entry k takes across: its line sample, its label and their spacing."""
        sample, label = self.items[k]
        preferred, spacing = Qt.SizeHint.PreferredSize, self.layout.horizontalSpacing()
        return (
            sample.effectiveSizeHint(preferred).width()
            + label.effectiveSizeHint(preferred).width()
            + 2 * spacing
        )

    def setGeometry(self, rect: QRectF) -> None:
        """Take the most columns that fit ``rect``'s width, then as few as keep that many rows
        (four entries in two rows of two, not three and one); the height follows next round."""
        widths = [self.entry_width(k) for k in range(len(self.items))]
        columns = 1
        for n in range(len(widths), 1, -1):
            if sum(max(widths[k::n]) for k in range(n)) <= rect.width():  # entry k sits in column k % n
                columns = -(-len(widths) // -(-len(widths) // n))
                break
        if self.items and columns != self.columnCount:
            self.setColumnCount(columns)
        super().setGeometry(rect)


def legend_below(view: pg.PlotWidget) -> LegendBelow:
    """Give ``view``'s plot a legend under its x axis (LegendBelow), where later named curves go."""
    item = view.getPlotItem()
    legend = LegendBelow(frame=False)
    item.layout.addItem(legend, 4, 0, 1, item.layout.columnCount())  # under the axes too
    item.legend = legend
    return legend


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
            if isinstance(item, pg.AxisItem) and not hasattr(item, SPACED):
                spaced_ticks(item)
            if isinstance(item, pg.PlotItem):
                WrappedTitle.of(item)
                if item.legend is not None:  # it sits outside the plot's layout: its size refits
                    item.legend.geometryChanged.connect(self.fit, Qt.ConnectionType.UniqueConnection)
                fit_view_box(item, self.lines)
        least = self.view.centralWidget.effectiveSizeHint(Qt.SizeHint.MinimumSize)
        frame = 2 * self.view.frameWidth()
        size = QSize(math.ceil(least.width()) + frame, math.ceil(least.height()) + frame)
        if self.view.minimumSize() != size:
            self.view.setMinimumSize(size)


def fit_view_box(plot: pg.PlotItem, lines: int = MIN_PLOT_LINES) -> None:
    """Keep ``plot``'s data area at least as long as its axis labels along each side, at least
    ``lines`` lines of text tall, and large enough for its legend where it is anchored: a
    squeezed plot cuts its labels and legend and shows no data."""
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
    legend = plot.legend
    inside = legend is not None and legend.parentItem() is plot.vb  # not a LegendBelow
    if inside and legend.isVisible() and legend.items:
        dx, dy = legend.opts["offset"] or (0, 0)
        wide = max(wide, legend.width() + abs(dx))
        tall = max(tall, legend.height() + abs(dy))
    vb = plot.getViewBox()
    if (vb.minimumWidth(), vb.minimumHeight()) != (wide, tall):
        vb.setMinimumSize(wide, tall)


def keep_plots_whole(view: pg.GraphicsView, lines: int = MIN_PLOT_LINES) -> PlotRoom:
    """``view``'s PlotRoom (data areas at least ``lines`` lines of text tall), made the first time."""
    room = view.findChild(PlotRoom)
    return room if room is not None else PlotRoom(view, lines)


class WrappedTitle(QObject):
    """Lets a long plot title wrap onto more lines when its plot is narrower than the title, so
    at a large text size it asks for the width of LINE_CHARACTERS characters, not its whole text.

    pyqtgraph gives a title the width of its text and a title row 30 px tall; this keeps the
    least width at LINE_CHARACTERS characters (or the longest word, if longer) and sets the row to
    the height the text needs at the width the layout gave it. Short titles never wrap."""

    LINE_CHARACTERS = 16

    def __init__(self, plot: pg.PlotItem):
        super().__init__(plot)
        self.plot, self.label = plot, plot.titleLabel
        self.measured: tuple | None = None  # (text and style, least width, full width, line height)
        self.label.item.document().setDefaultTextOption(QTextOption(Qt.AlignmentFlag.AlignHCenter))
        self.label.updateMin = self.update_min  # pyqtgraph calls it after every setText
        self.label.geometryChanged.connect(self.rewrap)
        self.update_min()

    @classmethod
    def of(cls, plot: pg.PlotItem) -> WrappedTitle:
        """``plot``'s WrappedTitle, made the first time."""
        found = plot.findChild(cls)
        return found if found is not None else cls(plot)

    def update_min(self) -> None:
        """Least width: LINE_CHARACTERS characters or the longest word; preferred: one line."""
        key = (self.label.text, repr(sorted(self.label.opts.items())))
        if self.measured is None or self.measured[0] != key:
            self.measured = (key, *self.measure())
        _, least, full, line = self.measured
        if self.label.minimumWidth() != least:
            self.label.setMinimumWidth(least)
        self.label._sizeHint = {
            Qt.SizeHint.MinimumSize: (least, line),
            Qt.SizeHint.PreferredSize: (full, line),
            Qt.SizeHint.MaximumSize: (-1, -1),
            Qt.SizeHint.MinimumDescent: (0, 0),
        }
        self.label.updateGeometry()
        self.rewrap()

    def measure(self) -> tuple[int, float, float]:
        """(least width, width on one line, height of one line) of the title's text."""
        item, document = self.label.item, self.label.item.document()
        item.setTextWidth(-1)
        full, line = item.boundingRect().width(), item.boundingRect().height()
        document.setTextWidth(1)
        word = document.idealWidth() + 2 * document.documentMargin()
        document.setTextWidth(-1)
        characters = full / max(1, len(document.toPlainText())) * self.LINE_CHARACTERS
        return math.ceil(min(full, max(word, characters))), full, line

    def rewrap(self) -> None:
        """Wrap at the label's width when the text is wider, centre it, and size the title row."""
        if not self.label.isVisible() or self.measured is None:
            return  # a hidden title: pyqtgraph has set its row to 0 px
        if not self.label.text:  # an empty title keeps pyqtgraph's row
            self.label.setMinimumHeight(0)
            return
        item, width = self.label.item, self.label.size().width()
        wrap = width if self.measured[2] > width + 0.5 else -1
        if item.textWidth() != wrap:
            item.setTextWidth(wrap)
        bounds = item.boundingRect()
        item.setPos((width - bounds.width()) / 2, 0)
        height = math.ceil(bounds.height())
        if self.label.maximumHeight() != height:
            self.label.setMinimumHeight(height)
            self.label.setMaximumHeight(height)
            self.plot.layout.setRowFixedHeight(0, height)
