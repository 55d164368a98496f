"""Keeping widgets the right size at the current text size: their own height as text wraps, text
fields and lists shown whole, combo boxes measured again when the font changes.
"""

from __future__ import annotations

from PySide6.QtCore import QEvent, QObject, Qt
from PySide6.QtWidgets import QApplication, QLineEdit, QListWidget

FIELD_MARGIN = 16  # pixels a text field needs beside its text (frame and margins)
FIELD_COLUMN_CHARS = (
    64  # the widest a text field (and its control column) grows for its text, in average characters
)


class OwnHeight:
    """For widgets whose minimumSizeHint says the least height they need at their current width
    (updated as the width changes): they answer no to height-for-width. A layout holding an item
    with height for width takes that height as the item's least, squeezing it and its neighbours
    below their least sizes (a wrapping label inside makes any widget answer yes)."""

    def hasHeightForWidth(self) -> bool:
        return False


def text_width(field: QLineEdit) -> int:
    """The width ``field`` needs to show its text whole at its font."""
    return field.fontMetrics().horizontalAdvance(field.text()) + FIELD_MARGIN


class WholeText(QObject):
    """Keeps a text field at least as wide as its text, up to FIELD_COLUMN_CHARS average
    characters, at the current text size: a prompt a lesson talks about shows whole, and the
    window gives it room before the lesson pane; a longer text scrolls inside the field."""

    def __init__(self, field: QLineEdit):
        super().__init__(field)
        self.field = field
        field.installEventFilter(self)
        field.textChanged.connect(self.fit)
        self.fit()

    def eventFilter(self, field: QObject, event: QEvent) -> bool:
        if event.type() == QEvent.Type.FontChange:
            self.fit()
        return False

    def fit(self) -> None:
        most = FIELD_COLUMN_CHARS * self.field.fontMetrics().averageCharWidth()
        self.field.setMinimumWidth(min(text_width(self.field), most))


class WholeItems(QObject):
    """Keeps a short list exactly as large as its items at the current text size: each item
    whole, no scroll bars (the window makes room for it instead)."""

    def __init__(self, view: QListWidget):
        super().__init__(view)
        self.view = view
        view.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        view.setVerticalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        view.installEventFilter(self)
        self.fit()

    def eventFilter(self, view: QObject, event: QEvent) -> bool:
        if event.type() in (QEvent.Type.FontChange, QEvent.Type.Polish):
            self.fit()
        return False

    def fit(self) -> None:
        view, frame = self.view, 2 * self.view.frameWidth()
        view.setFixedHeight(sum(view.sizeHintForRow(k) for k in range(view.count())) + frame)
        view.setMinimumWidth(view.sizeHintForColumn(0) + frame)


class ComboSizes(QObject):
    """A filter for combo boxes: Qt keeps a combo box's least size from the font it first had, so
    with larger text its current item would be cut; a new font makes it measure again."""

    def eventFilter(self, box: QObject, event: QEvent) -> bool:
        if event.type() == QEvent.Type.FontChange:
            QApplication.sendEvent(box, QEvent(QEvent.Type.StyleChange))  # clears both size caches
        return False
