"""An inline message strip: hidden when empty, coloured by severity, as tall as its wrapped text;
and follow_app_font, which keeps a widget with a style sheet at the application's text size."""

from __future__ import annotations

from PySide6.QtCore import QEvent
from PySide6.QtWidgets import QApplication, QLabel, QWidget

from app.widgets.sizing import OwnHeight

STYLES = {
    "error": "background:#fde2e1; color:#7a1010; border:1px solid #e0a0a0;",
    "warning": "background:#fff4d6; color:#6b4a00; border:1px solid #e6cc80;",
    "info": "background:#e3effd; color:#0d3c73; border:1px solid #a9c6ec;",
}


def follow_app_font(widget: QWidget) -> QWidget:
    """Keep ``widget`` at the application's font as it changes (View → Larger text). Qt leaves a
    widget with a style sheet of its own, or under one, at the font it had when it was styled."""
    QApplication.instance().fontChanged.connect(widget.setFont)
    return widget


class MessageBar(OwnHeight, QLabel):
    """Shows one message at a time; ``level`` is "error", "warning" or "info". Its least height
    is its wrapped text's."""

    def __init__(self, parent=None):
        super().__init__(parent)
        self.setWordWrap(True)
        self.setTextInteractionFlags(self.textInteractionFlags().TextSelectableByMouse)
        self.level = ""
        self.hide()
        follow_app_font(self)

    def show_message(self, text: str, level: str = "error") -> None:
        if level not in STYLES:
            raise ValueError(f"Unknown message level {level!r}.")
        self.level = level
        self.setStyleSheet(f"QLabel {{ {STYLES[level]} padding:4px 8px; border-radius:3px; }}")
        self.setText(text)
        self.show()
        self._fit_height()

    def _fit_height(self) -> None:
        """Keep every wrapped line: a crowded page would otherwise squeeze the strip to one."""
        height = self.heightForWidth(self.width()) if self.text() else 0
        if height != self.minimumHeight():
            self.setMinimumHeight(max(height, 0))

    def resizeEvent(self, event) -> None:
        super().resizeEvent(event)
        self._fit_height()

    def changeEvent(self, event) -> None:
        super().changeEvent(event)
        if event.type() == QEvent.Type.FontChange:  # larger text: more lines at the same width
            self._fit_height()

    def clear_message(self) -> None:
        self.level = ""
        self.clear()
        self.setMinimumHeight(0)
        self.hide()
