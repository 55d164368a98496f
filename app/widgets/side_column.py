"""A page's control column: as wide as its content at the current text size, hidden while the
window is presenting.
"""

from __future__ import annotations

from PySide6.QtCore import QEvent, QObject
from PySide6.QtWidgets import (
    QAbstractSpinBox,
    QBoxLayout,
    QComboBox,
    QFormLayout,
    QLayout,
    QLineEdit,
    QSizePolicy,
    QVBoxLayout,
    QWidget,
)

from app.widgets.sizing import FIELD_COLUMN_CHARS, text_width

SIDE_COLUMN = "side_column"  # property of the control columns that presenting mode hides
SIDE_COLUMN_CHARS = 48  # a control column's width for wrapping notes, in average characters


def alone_on_its_line(field: QWidget) -> bool:
    """Whether ``field`` has a line of its own in its form (no label beside it)."""
    parent = field.parentWidget()
    for form in parent.findChildren(QFormLayout) if parent is not None else ():
        row, role = form.getWidgetPosition(field)
        if row >= 0:
            wraps = form.rowWrapPolicy() == QFormLayout.RowWrapPolicy.WrapAllRows
            return wraps or role == QFormLayout.ItemRole.SpanningRole
    return False


class ColumnWidth(QObject):
    """Keeps a control column as wide as its content at the current text size: wide enough for
    the text typed into its fields (up to FIELD_COLUMN_CHARS average characters), else at most
    SIDE_COLUMN_CHARS unless a control needs more (wrapping notes would otherwise ask for a line
    of 80 characters). A filter, not a subclass: the column stays a plain QWidget, whose type
    names the controls' paths in saved lessons."""

    def __init__(self, column: QWidget):
        super().__init__(column)
        self.column = column
        self.fields: set[int] = set()  # the text fields whose changes refit the column

    def eventFilter(self, column: QWidget, event: QEvent) -> bool:
        # Shown too: a column that was hidden when the text size changed measured its controls
        # before they had the new font.
        if event.type() in (
            QEvent.Type.FontChange,
            QEvent.Type.LayoutRequest,
            QEvent.Type.Polish,
            QEvent.Type.Show,
        ):
            self.fit()
        return False

    def fit(self) -> None:
        column, layout = self.column, self.column.layout()
        least, hint = layout.minimumSize().width(), layout.sizeHint().width()
        char = column.fontMetrics().averageCharWidth()
        widest = max(least, SIDE_COLUMN_CHARS * char)
        wanted = least
        for field in column.findChildren(QLineEdit):
            if isinstance(field.parent(), (QAbstractSpinBox, QComboBox)):
                continue  # a spin box's or combo box's own editor
            if id(field) not in self.fields:
                self.fields.add(id(field))
                field.textChanged.connect(self.fit)
            text = text_width(field)
            if alone_on_its_line(field):  # a line of its own: the text and the column's margins
                margins = layout.contentsMargins()
                wanted = max(wanted, text + margins.left() + margins.right())
            else:  # beside its label: what the row asks now, widened to the text
                wanted = max(wanted, hint + text - field.sizeHint().width())
        width = min(wanted, max(widest, FIELD_COLUMN_CHARS * char))
        widest = max(widest, width)
        if (column.minimumWidth(), column.maximumWidth()) != (width, widest):
            column.setMinimumWidth(width)
            column.setMaximumWidth(widest)


def side_column(layout: QLayout) -> QWidget:
    """A column of controls holding ``layout``: as wide as its content (see ColumnWidth), hidden
    while the window is presenting. Where the column is narrower than a form row, the row's field
    goes under its label."""
    column = QWidget()
    column.setLayout(layout)
    for form in column.findChildren(QFormLayout):
        if form.rowWrapPolicy() == QFormLayout.RowWrapPolicy.DontWrapRows:
            form.setRowWrapPolicy(QFormLayout.RowWrapPolicy.WrapLongRows)
    column.setSizePolicy(QSizePolicy.Policy.Maximum, QSizePolicy.Policy.Preferred)
    column.setProperty(SIDE_COLUMN, True)
    column.installEventFilter(ColumnWidth(column))
    return column


def add(layout: QBoxLayout, item: QLayout | QWidget, stretch: int = 0) -> None:
    """Add a widget or a layout to ``layout``."""
    if isinstance(item, QLayout):
        layout.addLayout(item, stretch)
    else:
        layout.addWidget(item, stretch)


def stretches(item: QLayout | QWidget) -> bool:
    """Whether ``item`` is a column of controls that shares out extra height itself (it has a stretch)."""
    return isinstance(item, QVBoxLayout) and any(item.stretch(k) for k in range(item.count()))
