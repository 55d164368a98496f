"""MatrixView: a small matrix written out as numbers in tinted cells, optionally editable.

Clicking or hovering a cell emits its (row, column); highlighted rows, columns and cells are
outlined so a panel can show which numbers make another one. Edits are parsed here: anything that
is not a finite number is refused with ``invalidEdit(message)`` and the matrix keeps its value.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np
from PySide6.QtCore import QAbstractTableModel, QEvent, QModelIndex, Qt, Signal
from PySide6.QtGui import QBrush, QColor, QFont
from PySide6.QtWidgets import (
    QAbstractItemView,
    QAbstractScrollArea,
    QHeaderView,
    QLabel,
    QSizePolicy,
    QTableView,
    QVBoxLayout,
    QWidget,
)

from app.widgets.colors import colormap, default_levels
from core.explain import num

HIGHLIGHT = QColor("#ff8c00")
ALIGN_RIGHT = int(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
MASKED = (221, 221, 221, 255)


def parse_number(text: str) -> float:
    """A user-typed number (accepts "−" and ","), or ValueError saying what was wrong."""
    cleaned = text.strip().replace("−", "-").replace(",", ".")
    try:
        value = float(cleaned)
    except ValueError:
        raise ValueError(f"“{text}” is not a number.") from None
    if not np.isfinite(value):
        raise ValueError(f"“{text}” is not a finite number; use an ordinary value like 0.5.")
    return value


class MatrixModel(QAbstractTableModel):
    def __init__(self, view: MatrixView):
        super().__init__()
        self.view = view

    def rowCount(self, parent=QModelIndex()):
        return 0 if parent.isValid() else self.view.values.shape[0]

    def columnCount(self, parent=QModelIndex()):
        return 0 if parent.isValid() else self.view.values.shape[1]

    def data(self, index, role=Qt.ItemDataRole.DisplayRole):
        i, j, view = index.row(), index.column(), self.view
        if role in (Qt.ItemDataRole.DisplayRole, Qt.ItemDataRole.EditRole):
            return view.texts[i][j]
        if role == Qt.ItemDataRole.TextAlignmentRole:
            return ALIGN_RIGHT
        if role == Qt.ItemDataRole.BackgroundRole:
            return QBrush(HIGHLIGHT if view.is_highlighted(i, j) else QColor(*view.rgba[i, j]))
        if role == Qt.ItemDataRole.ForegroundRole:
            dark = view.is_highlighted(i, j) or view.dark_text[i, j]
            return QBrush(QColor("#000000" if dark else "#ffffff"))
        if role == Qt.ItemDataRole.FontRole and view.is_highlighted(i, j):
            font = QFont(view.font())
            font.setBold(True)
            return font
        return None

    def headerData(self, section, orientation, role=Qt.ItemDataRole.DisplayRole):
        if role != Qt.ItemDataRole.DisplayRole:
            return None
        labels = self.view.col_labels if orientation == Qt.Orientation.Horizontal else self.view.row_labels
        return labels[section] if section < len(labels) else str(section)

    def flags(self, index):
        base = Qt.ItemFlag.ItemIsEnabled | Qt.ItemFlag.ItemIsSelectable
        return base | Qt.ItemFlag.ItemIsEditable if self.view.editable else base

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


class MatrixView(QWidget):
    """A named matrix shown as numbers. ``set_data(values, row_labels, col_labels)``.

    Signals: clicked(i, j), hovered(i, j), edited(i, j, value) for a valid edit (the owner
    decides what to do with it and calls set_data), invalidEdit(message) for a refused one.
    """

    clicked = Signal(int, int)
    hovered = Signal(int, int)
    edited = Signal(int, int, float)
    invalidEdit = Signal(str)

    def __init__(
        self, name: str, signed: bool = True, editable: bool = False, decimals: int = 2, parent=None
    ):
        super().__init__(parent)
        self.name, self.signed, self.editable, self.decimals = name, signed, editable, decimals
        self.values = np.zeros((0, 0))
        self.levels = (-1.0, 1.0)
        self.row_labels: list[str] = []
        self.col_labels: list[str] = []
        self.rows: set[int] = set()
        self.cols: set[int] = set()
        self.cells: set[tuple[int, int]] = set()
        self.describer: Callable[[int, int], str] | None = None
        self.title = QLabel(name)
        self.table = QTableView()
        self.model = MatrixModel(self)
        self.table.setModel(self.model)
        self.table.setMouseTracking(True)
        self.table.setSizeAdjustPolicy(QAbstractScrollArea.SizeAdjustPolicy.AdjustToContents)
        self.table.setSizePolicy(QSizePolicy.Policy.Maximum, QSizePolicy.Policy.Maximum)
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
        self.rgba = np.zeros((0, 0, 4), dtype=np.uint8)
        self.dark_text = np.zeros((0, 0), dtype=bool)
        self.readout = QLabel(" ")
        self.readout.setWordWrap(True)
        self.readout.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.title)
        layout.addWidget(self.table)
        layout.addWidget(self.readout)
        layout.addStretch(1)
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
        if reshaped:
            self._size_columns()

    def _size_columns(self) -> None:
        """Size cells from the font and the widest number, not by measuring every cell."""
        metrics = self.table.fontMetrics()
        widest = max((len(t) for row in self.texts for t in row), default=1)
        labels = max((len(c) for c in self.col_labels), default=1)
        self.table.horizontalHeader().setDefaultSectionSize(
            metrics.horizontalAdvance("0" * max(widest, labels)) + 12
        )
        self.table.verticalHeader().setDefaultSectionSize(metrics.height() + 6)

    def changeEvent(self, event) -> None:
        if event.type() == QEvent.Type.FontChange:
            self._size_columns()
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
        """Cache every cell's text, colour and text colour (the table asks for them very often)."""
        v, (lo, hi) = self.values, self.levels
        finite = np.isfinite(v)
        frac = np.clip((np.where(finite, v, lo) - lo) / (hi - lo), 0.0, 1.0) if hi > lo else v * 0
        rgba = colormap(self.signed).map(frac.ravel(), mode="byte").reshape(*v.shape, 4).astype(float)
        if self.signed:  # paler, so black text stays readable
            rgba[..., :3] = 255 - (255 - rgba[..., :3]) * 0.6
        rgba[~finite] = MASKED
        self.rgba = rgba.astype(np.uint8)
        luminance = self.rgba[..., :3] @ np.array([0.2126, 0.7152, 0.0722]) / 255
        self.dark_text = luminance > 0.5
        self.texts = [[num(x, self.decimals) for x in row] for row in v]

    def describe(self, i: int, j: int) -> str:
        head = f"{self.name}[{self.row_labels[i]}, {self.col_labels[j]}] = "
        head += num(self.values[i, j], 4)
        return f"{head}    {self.describer(i, j)}" if self.describer else head

    def _on_enter(self, index) -> None:
        self.readout.setText(self.describe(index.row(), index.column()))
        self.hovered.emit(index.row(), index.column())
