"""PageStack: a stacked widget that asks only for the room of the page on screen.

A plain QStackedWidget needs as much room as its widest and tallest page, hidden ones too, so one
wide page would widen every page of its panel, and one wide panel would squeeze the lesson pane
beside every other panel, for as long as the app runs. The main window stacks its panels in one,
and every panel its step pages.
"""

from __future__ import annotations

from PySide6.QtCore import QSize
from PySide6.QtWidgets import QLayout, QStackedWidget


class PageStack(QStackedWidget):
    def __init__(self, parent=None):
        super().__init__(parent)
        # The layout would pin the stack's minimum to its widest page; the hints below decide.
        self.layout().setSizeConstraint(QLayout.SizeConstraint.SetNoConstraint)
        self.currentChanged.connect(lambda _: self.updateGeometry())

    def sizeHint(self) -> QSize:
        page = self.currentWidget()
        return page.sizeHint() if page is not None else super().sizeHint()

    def minimumSizeHint(self) -> QSize:
        page = self.currentWidget()
        return page.minimumSizeHint() if page is not None else super().minimumSizeHint()

    def hasHeightForWidth(self) -> bool:
        page = self.currentWidget()
        return page.hasHeightForWidth() if page is not None else False

    def heightForWidth(self, width: int) -> int:
        page = self.currentWidget()
        return page.heightForWidth(width) if page is not None else -1
