"""What the Q, K, V steps share: a note above one view."""

from __future__ import annotations

from PySide6.QtWidgets import QLabel, QVBoxLayout, QWidget

from app.widgets.text import note


def lay_out(page: QWidget, text: str | QLabel, view: QWidget) -> QVBoxLayout:
    layout = QVBoxLayout(page)
    layout.addWidget(text if isinstance(text, QLabel) else note(text))
    layout.addWidget(view, 1)
    return layout
