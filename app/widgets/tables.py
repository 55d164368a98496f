"""Read-only tables of text: one factory and one filler for every panel."""

from __future__ import annotations

from collections.abc import Sequence

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QAbstractItemView,
    QAbstractScrollArea,
    QHeaderView,
    QStyle,
    QTableWidget,
    QTableWidgetItem,
)

RIGHT = Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter


def text_table(
    columns: Sequence[str], row_labels: bool = True, fit: bool = False, size_columns: bool = False
) -> QTableWidget:
    """An empty read-only table with these column headers. ``fit``: columns and table sized to the
    text (no scroll bars), for short tables. Otherwise the last column takes the free width, and
    ``size_columns`` sizes the others to their text (measured at every change: short tables only)."""
    table = QTableWidget(0, len(columns))
    table.setHorizontalHeaderLabels(list(columns))
    table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
    table.setSelectionMode(QAbstractItemView.SelectionMode.NoSelection)
    table.verticalHeader().setVisible(row_labels)
    if fit or size_columns:
        table.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
    if fit:
        table.setVerticalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        table.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        table.setSizeAdjustPolicy(QAbstractScrollArea.SizeAdjustPolicy.AdjustToContents)
    else:
        header = table.horizontalHeader()
        header.setSectionResizeMode(len(columns) - 1, QHeaderView.ResizeMode.Stretch)
        header.sectionResized.connect(lambda *_: _ask_for_columns(table))
        header.geometriesChanged.connect(lambda: _ask_for_columns(table))  # a new text size
        _ask_for_columns(table)
    return table


def _ask_for_columns(table: QTableWidget) -> None:
    """At least as wide as the columns' text (and a vertical scroll bar): a layout then shares out
    what is left, instead of squeezing the table into a horizontal scroll bar."""
    bar = table.style().pixelMetric(QStyle.PixelMetric.PM_ScrollBarExtent)
    rows = table.verticalHeader().sizeHint().width() if table.verticalHeader().isVisible() else 0
    header, last = table.horizontalHeader(), table.columnCount() - 1
    for k in range(last):  # a column a person sizes starts wide enough for its title
        fixed = header.sectionResizeMode(k) == QHeaderView.ResizeMode.Interactive
        if fixed and header.sectionSize(k) < header.sectionSizeHint(k):
            header.resizeSection(k, header.sectionSizeHint(k))
    # The last column is stretched to the free width, so its text, not its size, counts (and the
    # least size the header allows any section).
    content = sum(header.sectionSize(k) for k in range(last))
    if last >= 0:
        content += max(
            header.sectionSizeHint(last), table.sizeHintForColumn(last), header.minimumSectionSize()
        )
    width = rows + content + bar + 2 * table.frameWidth()
    if table.minimumWidth() != width:
        table.setMinimumWidth(width)


def fill_table(
    table: QTableWidget, cells: Sequence[Sequence[str]], rows: Sequence[str] | None = None
) -> None:
    """Write ``cells`` (one list of texts per row, right-aligned) into ``table``, reusing its items;
    ``rows``: the row headers."""
    if table.rowCount() != len(cells):
        table.setRowCount(len(cells))
    if rows is not None and table.property("rows") != list(rows):
        table.setVerticalHeaderLabels(list(rows))
        table.setProperty("rows", list(rows))
    for i, row in enumerate(cells):
        for j, text in enumerate(row):
            item = table.item(i, j)
            if item is None:
                item = QTableWidgetItem()
                item.setTextAlignment(RIGHT)
                table.setItem(i, j, item)
            if item.text() != text:
                item.setText(text)
