"""Predict, then reveal: cover the current step's result until the lecturer reveals it.

While the mode is on, every step change covers the views the panel names as that step's result
(``Panel.result_views``), so a class can guess first. A click on the cover, or Reveal, uncovers them.
"""

from __future__ import annotations

from PySide6.QtCore import QEvent, QObject, Qt
from PySide6.QtWidgets import QLabel, QWidget

COVER_TEXT = "Predict first: what will this show?\n\nClick here or press Ctrl+R to reveal."


class Cover(QLabel):
    """An opaque card over ``target`` that follows its size; clicking it reveals."""

    def __init__(self, target: QWidget, on_click):
        super().__init__(COVER_TEXT, target)
        self.on_click = on_click
        self.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.setWordWrap(True)
        self.setAutoFillBackground(True)  # the palette's window colour: follows the theme
        self.setFrameShape(QLabel.Shape.StyledPanel)
        self.setCursor(Qt.CursorShape.PointingHandCursor)
        target.installEventFilter(self)
        self.setGeometry(target.rect())
        self.raise_()

    def eventFilter(self, obj, event) -> bool:
        if event.type() == QEvent.Type.Resize:
            self.setGeometry(obj.rect())
        return False

    def mousePressEvent(self, event) -> None:
        self.on_click()


class Reveal(QObject):
    """The mode and the covers of the current step; ``cover(panel)`` after every step change."""

    def __init__(self, parent=None):
        super().__init__(parent)
        self.enabled = False
        self.covers: list[Cover] = []

    def set_enabled(self, on: bool, panel=None) -> None:
        self.enabled = on
        if on and panel is not None:
            self.cover(panel)
        elif not on:
            self.reveal()

    def cover(self, panel) -> None:
        """Cover the result views of ``panel``'s current step (when the mode is on)."""
        self.reveal()
        if not self.enabled:
            return
        for view in panel.result_views(panel.step):
            cover = Cover(view, self.reveal)
            cover.show()
            self.covers.append(cover)

    def reveal(self) -> None:
        for cover in self.covers:
            cover.parentWidget().removeEventFilter(cover)
            cover.hide()
            cover.deleteLater()
        self.covers = []

    def covered(self) -> list[QWidget]:
        return [cover.parentWidget() for cover in self.covers]
