"""Small helpers every panel uses to build its controls."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QLabel, QLayout, QSizePolicy, QWidget

SIDE_COLUMN = "side_column"  # property of the control columns that presenting mode hides


def note(text: str = "", rich: bool = False) -> QLabel:
    """A wrapping, selectable text label for the explanations beside a view (HTML if ``rich``)."""
    label = QLabel(text)
    label.setWordWrap(True)
    if rich:
        label.setTextFormat(Qt.TextFormat.RichText)
    label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
    return label


def set_quietly(widget, value) -> None:
    """Show ``value`` in a control without emitting its change signal (no recompute)."""
    widget.blockSignals(True)
    widget.setValue(value)
    widget.blockSignals(False)


def side_column(layout: QLayout) -> QWidget:
    """A column of controls beside a panel's view: as wide as its content at the current text
    size (no wider), and hidden while the window is presenting."""
    column = QWidget()
    column.setLayout(layout)
    column.setSizePolicy(QSizePolicy.Policy.Maximum, QSizePolicy.Policy.Preferred)
    column.setProperty(SIDE_COLUMN, True)
    return column
