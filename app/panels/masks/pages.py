"""What the Masks steps share: a note above the step's views."""

from __future__ import annotations

from PySide6.QtWidgets import QLayout, QVBoxLayout, QWidget

from app.widgets.text import note


def lay_out(page: QWidget, text: str, content: QWidget | QLayout) -> None:
    layout = QVBoxLayout(page)
    layout.addWidget(note(text))
    if isinstance(content, QWidget):
        layout.addWidget(content, 1)
    else:
        layout.addLayout(content, 1)
