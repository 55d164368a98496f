"""PageStack: a stacked widget that asks only for the room of the page on screen.

A plain QStackedWidget needs as much room as its widest page, so one wide panel would squeeze the
lesson pane beside every other panel for as long as the app runs. (Panels keep plain stacks for
their steps: the type names the controls' paths in saved lessons.)
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
