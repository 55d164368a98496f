"""Small helpers every panel uses to build its controls."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QLabel


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
