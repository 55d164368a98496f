"""MatrixView: a small matrix written out as numbers in tinted cells, optionally editable.

The cells grow with the room the view is given and with the text size: the numbers are drawn at
the application's font times a zoom factor, the largest (up to MAX_ZOOM) at which the whole matrix
fits; short of room they shrink to MIN_ZOOM before the matrix scrolls. The view asks for the room
of its whole matrix at MIN_ZOOM, measured rather than scaled (fonts do not scale exactly).

Clicking or hovering a cell emits its (row, column); highlighted rows, columns and cells are
outlined so a panel can show which numbers make another one. Edits are parsed here: anything that
is not a finite number is refused with ``invalidEdit(message)`` and the matrix keeps its value.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from functools import lru_cache

import numpy as np
from PySide6.QtCore import QAbstractTableModel, QEvent, QModelIndex, QSize, Qt, Signal
from PySide6.QtGui import QBrush, QColor, QFont, QFontMetrics
from PySide6.QtWidgets import (
    QAbstractItemView,
    QHeaderView,
    QLabel,
    QLayout,
    QSizePolicy,
    QStyle,
    QStyledItemDelegate,
    QTableView,
    QVBoxLayout,
    QWidget,
)

from app.widgets.colors import colormap, default_levels
from app.widgets.sizing import OwnHeight
from app.widgets.text import note
from core import inputs
from core.maths.explain import num

HIGHLIGHT_BRUSH = QBrush(QColor("#ff8c00"))
DARK_TEXT, LIGHT_TEXT = QColor("#000000"), QColor("#ffffff")
MASKED_BRUSH = QBrush(QColor("#dddddd"))
MAX_CELL = 10_000.0  # a typed cell value lies in ±MAX_CELL
MAX_ZOOM = 2.5  # cells grow with the room up to this many times the text size
MIN_ZOOM = 0.8  # ... and shrink to this share of it before a matrix scrolls
FIT_SHARE = 0.97  # of its room a fitted matrix fills (slack for what does not scale with the zoom)
MIN_TABLE_CHARS = 56  # a matrix asks for its whole width up to this many average characters
MIN_TABLE_HEIGHT = 160  # pixels: the least height a tall matrix asks for before it scrolls
SHADES = 256  # colour steps per colormap; cell colours are cached brushes, one per step
ALIGN_RIGHT = int(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
READ_ONLY = Qt.ItemFlag.ItemIsEnabled | Qt.ItemFlag.ItemIsSelectable
EDITABLE = READ_ONLY | Qt.ItemFlag.ItemIsEditable
DISPLAY, EDIT, ALIGNMENT = (
    int(r) for r in (Qt.ItemDataRole.DisplayRole, Qt.ItemDataRole.EditRole, Qt.ItemDataRole.TextAlignmentRole)
)


@lru_cache(maxsize=4)
def shade_table(signed: bool) -> tuple[list[QBrush], np.ndarray]:
    """Brushes for SHADES steps of the colormap (plus one for masked cells), and which need dark text."""
    rgb = colormap(signed).map(np.linspace(0, 1, SHADES), mode="byte")[:, :3].astype(float)
    if signed:  # paler, so black text stays readable
        rgb = 255 - (255 - rgb) * 0.6
    brushes = [QBrush(QColor(*map(int, c))) for c in rgb] + [MASKED_BRUSH]
    dark = np.append(rgb @ np.array([0.2126, 0.7152, 0.0722]) > 127, True)
    return brushes, dark


def number_texts(values: np.ndarray, decimals: int) -> list[list[str]]:
    """Each cell's text, as core.maths.explain.num writes it, formatted in one vectorised pass."""
    texts = np.char.mod(f"%.{decimals}f", values)
    texts = np.char.replace(texts, "-", "−")
    texts[texts == "−" + "0." + "0" * decimals] = "0." + "0" * decimals
    texts[np.isneginf(values)], texts[np.isposinf(values)], texts[np.isnan(values)] = "−∞", "∞", "–"
    return texts.tolist()


def parse_number(text: str) -> float:
    """A number typed into a cell (accepts "−" and ","), within ±MAX_CELL, or ValueError saying so."""
    return inputs.real(text, "A cell", -MAX_CELL, MAX_CELL)


class CellPainter(QStyledItemDelegate):
    """Paints a cell straight from the view's cached colours and text: one Python call per cell
    instead of one per data role, which keeps a repaint of a tall matrix within a frame."""

    def __init__(self, view: MatrixView):
        super().__init__(view)
        self.view = view

    def paint(self, painter, option, index) -> None:
        view, i, j = self.view, index.row(), index.column()
        lit = view.is_highlighted(i, j)
        painter.fillRect(option.rect, HIGHLIGHT_BRUSH if lit else view.brushes[view.shade[i, j]])
        painter.setPen(DARK_TEXT if lit or view.dark_text[i, j] else LIGHT_TEXT)
        painter.setFont(view.bold_font if lit else view.cell_font)
        painter.drawText(option.rect.adjusted(2, 0, -4, 0), ALIGN_RIGHT, view.texts[i][j])


class MatrixModel(QAbstractTableModel):
    def __init__(self, view: MatrixView):
        super().__init__()
        self.view = view

    def rowCount(self, parent=QModelIndex()):
        return 0 if parent.isValid() else self.view.values.shape[0]

    def columnCount(self, parent=QModelIndex()):
        return 0 if parent.isValid() else self.view.values.shape[1]

    def data(self, index, role=DISPLAY):
        # Colours and fonts come from CellPainter; the model only gives the text (shown and edited).
        if role in (DISPLAY, EDIT):
            return self.view.texts[index.row()][index.column()]
        if role == ALIGNMENT:
            return ALIGN_RIGHT
        return None

    def headerData(self, section, orientation, role=Qt.ItemDataRole.DisplayRole):
        if role != Qt.ItemDataRole.DisplayRole:
            return None
        labels = self.view.col_labels if orientation == Qt.Orientation.Horizontal else self.view.row_labels
        return labels[section] if section < len(labels) else str(section)

    def flags(self, index):
        return EDITABLE if self.view.editable else READ_ONLY

    def setData(self, index, value, role=Qt.ItemDataRole.EditRole):
        if role != Qt.ItemDataRole.EditRole:
            return False
        i, j = index.row(), index.column()
        try:
            number = parse_number(str(value))
        except ValueError as exc:
            self.view.invalidEdit.emit(f"{self.view.name}[{self.view.row_labels[i]}, {j}]: {exc}")
            return False
        self.view.edited.emit(i, j, number)
        return True

    def refresh(self, reshaped: bool) -> None:
        if reshaped:
            self.beginResetModel()
            self.endResetModel()
        elif self.view.values.size:
            last = self.index(self.rowCount() - 1, self.columnCount() - 1)
            self.dataChanged.emit(self.index(0, 0), last)
            self.headerDataChanged.emit(Qt.Orientation.Vertical, 0, self.rowCount() - 1)


def least_table_size(widget: QWidget) -> QSize:
    """The most a matrix asks for as its least size at ``widget``'s text size: it is shown whole
    up to this (the window gives it room before the lesson pane), and scrolls beyond it."""
    return QSize(MIN_TABLE_CHARS * widget.fontMetrics().averageCharWidth(), MIN_TABLE_HEIGHT)


def least_room(content: QSize, widget: QWidget, shown: QSize | None = None) -> QSize:
    """The least room for a table of ``content`` size: all of it up to least_table_size, plus the
    scroll bar that a table cut short in one direction shows across the other. Given the size
    the table is ``shown`` at, only a bar it shows: a table shown whole asks for no strip of room
    under its last row or beside its last column."""
    most, bar = least_table_size(widget), widget.style().pixelMetric(QStyle.PixelMetric.PM_ScrollBarExtent)
    shown = shown if shown is not None else QSize(0, 0)
    cut_across = content.width() > max(most.width(), shown.width())
    cut_down = content.height() > max(most.height(), shown.height())
    width = content.width() + (bar if cut_down else 0)
    height = content.height() + (bar if cut_across else 0)
    return QSize(min(width, most.width()), min(height, most.height()))


class FittedTable(QTableView):
    """A table whose size hint is its whole content, so a layout gives it all of that it can."""

    def __init__(self, owner: QWidget):
        super().__init__()
        self.owner = owner  # whose font (not the zoomed cells') sets the least size
        self.content = QSize(0, 0)

    def sizeHint(self) -> QSize:
        return self.content

    def minimumSizeHint(self) -> QSize:
        """All of it where the owner sets the size (MatrixView with fit=False), else least_room
        at the size it has now."""
        return least_room(self.content, self.owner, self.size()) if self.owner.fit else self.content

    def resizeEvent(self, event) -> None:
        super().resizeEvent(event)
        if self.owner.fit and self.minimumSizeHint() != least_room(self.content, self.owner, event.oldSize()):
            self.updateGeometry()  # whole now, or cut now: the scroll bar's room comes or goes


class MatrixView(OwnHeight, QWidget):
    """A named matrix shown as numbers. ``set_data(values, row_labels, col_labels)``.

    fit=True (the default): the cells grow to fill the room the view is given. fit=False: the
    owner sets the zoom (``set_zoom``), e.g. to give several matrices one common cell size, and
    the view asks for exactly the size of its cells at that zoom.

    Signals: clicked(i, j), hovered(i, j), edited(i, j, value) for a valid edit (the owner
    decides what to do with it and calls set_data), invalidEdit(message) for a refused one,
    measured() when the size at zoom 1 changed (new shape, labels or font).
    """

    clicked = Signal(int, int)
    hovered = Signal(int, int)
    edited = Signal(int, int, float)
    invalidEdit = Signal(str)
    measured = Signal()

    def __init__(
        self,
        name: str,
        signed: bool = True,
        editable: bool = False,
        decimals: int = 2,
        fit: bool = True,
        parent=None,
    ):
        super().__init__(parent)
        self.name, self.signed, self.editable, self.decimals = name, signed, editable, decimals
        self.fit, self.zoom = fit, 1.0
        self.natural = QSize(0, 0)  # the table's size at zoom 1
        self.least = QSize(0, 0)  # ... and at MIN_ZOOM
        self.size_key: tuple = ()  # what they were measured for (_size_key)
        self.values = np.zeros((0, 0))
        self.levels = (-1.0, 1.0)
        self.row_labels: list[str] = []
        self.col_labels: list[str] = []
        self.rows: set[int] = set()
        self.cols: set[int] = set()
        self.cells: set[tuple[int, int]] = set()
        self.describer: Callable[[int, int], str] | None = None
        self.title = QLabel(name)
        self.table = FittedTable(self)
        self.model = MatrixModel(self)
        self.table.setModel(self.model)
        self.table.setItemDelegate(CellPainter(self))
        self.table.setMouseTracking(True)
        self.table.setSelectionMode(QAbstractItemView.SelectionMode.NoSelection)
        triggers = QAbstractItemView.EditTrigger
        self.table.setEditTriggers(
            triggers.DoubleClicked | triggers.EditKeyPressed | triggers.AnyKeyPressed
            if editable
            else triggers.NoEditTriggers
        )
        self.table.verticalHeader().setSectionResizeMode(QHeaderView.ResizeMode.Fixed)
        self.table.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.Fixed)
        self.texts: list[list[str]] = []
        self.brushes, _ = shade_table(signed)
        self.shade = np.zeros((0, 0), dtype=int)
        self.dark_text = np.zeros((0, 0), dtype=bool)
        self.cell_font = self.bold_font = QFont(self.font())
        self.readout = note(" ")  # names tokens, which may be long
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        # The view's own size hints (below) say what it needs; the layout must not pin it to more.
        layout.setSizeConstraint(QLayout.SizeConstraint.SetNoConstraint)
        layout.addWidget(self.title)
        layout.addWidget(self.table, 0, Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignTop)
        layout.addWidget(self.readout)
        layout.addStretch(1)
        self.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Expanding)
        self.table.clicked.connect(lambda ix: self.clicked.emit(ix.row(), ix.column()))
        self.table.entered.connect(self._on_enter)

    def set_data(
        self,
        values: np.ndarray,
        row_labels: Sequence[str] | None = None,
        col_labels: Sequence[str] | None = None,
        levels: tuple[float, float] | None = None,
    ) -> None:
        values = np.asarray(values, dtype=np.float64)
        if values.ndim != 2:
            raise ValueError(f"{self.name} must be a 2-D matrix, got shape {values.shape}.")
        reshaped = values.shape != self.values.shape
        self.values = values
        n, m = values.shape
        self.row_labels = list(row_labels) if row_labels is not None else [str(i) for i in range(n)]
        self.col_labels = list(col_labels) if col_labels is not None else [str(j) for j in range(m)]
        self.levels = levels if levels is not None else default_levels(values, self.signed)
        if reshaped:
            self.rows, self.cols, self.cells = set(), set(), set()
        self._recolor()
        self.model.refresh(reshaped)
        self._measure()

    # --- sizes ------------------------------------------------------------------------------
    def _longest_text(self) -> str:
        """The cell text with the most characters (digits are equally wide: the widest one)."""
        return max((t for row in self.texts for t in row), key=len, default="0")

    def _size_key(self) -> tuple:
        """What the table's size depends on: its shape, its widest number and column label (by
        width: digits are equally wide, so new values of the same form keep the key), its row
        labels and the font."""
        metrics = QFontMetrics(self.font())
        label = max(self.col_labels, key=len, default="0")
        widths = (metrics.horizontalAdvance(self._longest_text()), metrics.horizontalAdvance(label))
        return self.values.shape, widths, tuple(self.row_labels), self.font().key()

    def _measure(self) -> None:
        """Find the table's size at zoom 1, then lay the cells out at the zoom the room allows;
        nothing to do when the sizes cannot have changed (new values of the same form: a
        repaint only, no new fonts)."""
        key = self._size_key()
        if key == self.size_key:
            return
        self.size_key = key
        natural = self._layout_cells(1.0)
        if natural != self.natural:
            self.natural, self.least = natural, self._layout_cells(MIN_ZOOM)
            self.updateGeometry()
            self.measured.emit()
        self._apply_zoom(self._fitting_zoom() if self.fit else self.zoom)

    def _layout_cells(self, zoom: float) -> QSize:
        """Size the cells for the font times ``zoom`` (from the widest text, not every cell);
        returns the table's whole size then."""
        font = QFont(self.font())
        font.setPointSizeF(self.font().pointSizeF() * zoom)
        self.table.setFont(font)
        self.cell_font = font
        self.bold_font = QFont(font)
        self.bold_font.setBold(True)
        metrics = QFontMetrics(font)
        table, pad = self.table, max(round(6 * min(zoom, 1.0)), round(4 * zoom))
        columns, rows = table.horizontalHeader(), table.verticalHeader()
        columns.setMinimumSectionSize(1)  # else each hint is at least the size set last time
        title = max(map(columns.sectionSizeHint, range(len(self.col_labels))), default=0)  # with margins
        widest = max(metrics.horizontalAdvance(self._longest_text()) + 2 * pad, title)
        # A header keeps the least section size of the largest font it had (a zoom of MAX_ZOOM
        # while hidden) unless told otherwise: set it with the size, so cells can shrink again.
        for header, size in ((columns, widest), (rows, metrics.height() + pad)):
            header.setMinimumSectionSize(size)
            header.setDefaultSectionSize(size)
        frame = 2 * table.frameWidth()
        width = table.verticalHeader().sizeHint().width() + table.horizontalHeader().length() + frame
        height = table.horizontalHeader().sizeHint().height() + table.verticalHeader().length() + frame
        return QSize(width, height)

    def _apply_zoom(self, zoom: float) -> None:
        self.zoom = zoom
        self.table.content = self._layout_cells(zoom)
        self.table.updateGeometry()
        if not self.fit:
            self.updateGeometry()

    def set_zoom(self, zoom: float) -> None:
        """Draw the cells at ``zoom`` times the text size (for views with fit=False)."""
        if abs(zoom - self.zoom) > 1e-3:
            self._apply_zoom(zoom)

    def _room(self) -> QSize:
        """The room this view has for its table."""
        spacing = self.layout().spacing()
        used = self.title.sizeHint().height() + spacing
        if self.readout.isVisibleTo(self):
            used += self.readout.sizeHint().height() + spacing
        return QSize(self.width(), self.height() - used)

    def _fitting_zoom(self) -> float:
        """The largest zoom, in steps of 0.05 from MIN_ZOOM to MAX_ZOOM, at which the table fits its
        room: estimated from the size at zoom 1, then measured (fonts do not scale exactly)."""
        room, natural = self._room(), self.natural
        if natural.width() <= 0 or natural.height() <= 0:
            return 1.0
        ratio = min(room.width() / natural.width(), room.height() / natural.height())
        zoom = min(max(np.floor(ratio * FIT_SHARE * 20) / 20, MIN_ZOOM), MAX_ZOOM)
        while zoom > MIN_ZOOM:
            size = self._layout_cells(zoom)
            if size.width() <= room.width() and size.height() <= room.height():
                break
            zoom = max(round(zoom - 0.05, 2), MIN_ZOOM)
        return zoom

    def sizeHint(self) -> QSize:
        """At zoom 1 when the view fits itself (a hint that followed the zoom would feed back
        into the room it is given); at the set zoom otherwise."""
        table = self.natural if self.fit else self.table.content
        spacing = self.layout().spacing()
        height = self.title.sizeHint().height() + spacing + table.height()
        if self.readout.isVisibleTo(self):
            height += self.readout.sizeHint().height() + spacing
        return QSize(max(table.width(), self.title.sizeHint().width()), height)

    def minimumSizeHint(self) -> QSize:
        """Room for the whole matrix at MIN_ZOOM, up to least_table_size (at the set zoom, all of
        it, when the owner sets it)."""
        hint = self.sizeHint()
        table = least_room(self.least, self) if self.fit else self.table.content
        grown = self.natural if self.fit else self.table.content
        return QSize(
            max(table.width(), self.title.sizeHint().width()),
            hint.height() - grown.height() + table.height(),
        )

    def resizeEvent(self, event) -> None:
        super().resizeEvent(event)
        if self.fit:
            zoom = self._fitting_zoom()
            if abs(zoom - self.zoom) > 1e-3:
                self._apply_zoom(zoom)

    def changeEvent(self, event) -> None:
        if event.type() == QEvent.Type.FontChange:
            self._measure()
        super().changeEvent(event)

    def set_title(self, text: str) -> None:
        self.title.setText(text)

    def set_describer(self, describer: Callable[[int, int], str] | None) -> None:
        self.describer = describer

    def highlight(self, rows=(), cols=(), cells=()) -> None:
        """Outline whole rows, whole columns and single cells (all empty clears)."""
        self.rows, self.cols, self.cells = set(rows), set(cols), set(cells)
        self.model.refresh(False)

    def is_highlighted(self, i: int, j: int) -> bool:
        return i in self.rows or j in self.cols or (i, j) in self.cells

    def _recolor(self) -> None:
        """Cache every cell's text and colour step (the table asks for them very often)."""
        v, (lo, hi) = self.values, self.levels
        finite = np.isfinite(v)
        frac = np.clip((np.where(finite, v, lo) - lo) / (hi - lo), 0.0, 1.0) if hi > lo else v * 0
        self.brushes, dark = shade_table(self.signed)
        self.shade = np.where(finite, np.rint(frac * (SHADES - 1)).astype(int), SHADES)
        self.dark_text = dark[self.shade]
        self.texts = number_texts(v, self.decimals)

    def describe(self, i: int, j: int) -> str:
        column = " ".join(self.col_labels[j].split())  # a title on two lines reads as one
        head = f"{self.name}[{self.row_labels[i]}, {column}] = "
        head += num(self.values[i, j], 4)
        return f"{head}    {self.describer(i, j)}" if self.describer else head

    def _on_enter(self, index) -> None:
        self.readout.setText(self.describe(index.row(), index.column()))
        self.hovered.emit(index.row(), index.column())
