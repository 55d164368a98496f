"""PageStack: a stacked widget that asks only for the room of the page on screen; PanelScroll: the
window's panels, scrolling up and down when the window is too short for them.

A plain QStackedWidget needs as much room as its widest and tallest page, hidden ones too, so one
wide page would widen every page of its panel, and one wide panel would squeeze the lesson pane
beside every other panel, for as long as the app runs. The main window stacks its panels in one,
and every panel its step pages.
"""

from __future__ import annotations

from PySide6.QtCore import QEvent, QObject, QSize, Qt
from PySide6.QtWidgets import QFrame, QLayout, QScrollArea, QStackedWidget


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


class PanelScroll(QScrollArea):
    """Shows ``stack`` at the room it is given, but never below its least size: when the window is
    shorter than the panel needs (large text on a small screen) the panel scrolls up and down
    instead of growing the window past the screen. It never scrolls sideways: it asks for the
    panel's least width, and the scroll bar's while that shows.

    The stack is sized here rather than by QScrollArea's resizable mode, which would size it by
    its preferred height for the width and scroll where the least height fits."""

    def __init__(self, stack: PageStack):
        super().__init__()
        self.setFrameShape(QFrame.Shape.NoFrame)
        self.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.setWidget(stack)  # installs this area's event filter on the stack
        self.verticalScrollBar().installEventFilter(self)

    def minimumSizeHint(self) -> QSize:
        bar = self.verticalScrollBar()
        extra = bar.sizeHint().width() if bar.isVisibleTo(self) else 0
        return QSize(self.widget().minimumSizeHint().width() + extra, super().minimumSizeHint().height())

    def fit(self) -> None:
        room, least = self.viewport().size(), self.widget().minimumSizeHint()
        self.widget().resize(max(room.width(), least.width()), max(room.height(), least.height()))

    def viewportEvent(self, event: QEvent) -> bool:
        if event.type() == QEvent.Type.Resize:
            self.fit()
        return super().viewportEvent(event)

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        kind = event.type()
        if watched is self.widget() and kind == QEvent.Type.LayoutRequest:
            self.fit()  # the panel or its step changed what it needs
            self.updateGeometry()
        elif watched is self.verticalScrollBar() and kind in (QEvent.Type.Show, QEvent.Type.Hide):
            self.updateGeometry()  # the bar takes room from the panel, or gives it back
        return super().eventFilter(watched, event)
