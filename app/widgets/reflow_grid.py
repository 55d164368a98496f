"""A grid of controls that adds rows rather than widening the page when room is short."""

from __future__ import annotations

from collections.abc import Iterable

from PySide6.QtCore import QRect, QSize
from PySide6.QtWidgets import QGridLayout, QWidget

Cell = tuple[QWidget, int, int, int]  # a widget, its row, its column and how many columns it spans


class ReflowGrid(QGridLayout):
    """A grid of controls in two arrangements of the same widgets: ``wide`` (few rows) where the
    room allows, else ``narrow`` (more rows, fewer columns), so larger text on a small screen adds
    rows rather than widening the panel. Its least width is the narrow arrangement's. ``stretch``
    names the column that takes the spare room in each arrangement. Widgets are added in the wide
    arrangement's order, which names their paths in saved lessons."""

    def __init__(self, wide: Iterable[Cell], narrow: Iterable[Cell], stretch: tuple[int, int] = (1, 1)):
        super().__init__()
        self.arrangements = (tuple(wide), tuple(narrow))
        self.stretch = stretch
        self.shown = -1  # index into arrangements of the one in place
        self.measured: tuple = ()  # what the least sizes below were measured for
        self.least = (QSize(), QSize())  # each arrangement's least size
        self.wide_hint = QSize()
        self._arrange(0)

    def _arrange(self, k: int) -> None:
        if k == self.shown:
            return
        for widget, *_ in self.arrangements[self.shown] if self.shown >= 0 else ():
            self.removeWidget(widget)
        for column in range(self.columnCount()):
            self.setColumnStretch(column, 0)
        for widget, row, column, span in self.arrangements[k]:
            self.addWidget(widget, row, column, 1, span)
        self.setColumnStretch(self.stretch[k], 1)
        self.shown = k

    def _measure(self) -> None:
        """Both arrangements' least sizes, measured again when a widget's least size changed
        (a new text size)."""
        widgets = [cell[0] for cell in self.arrangements[0]]
        key = tuple((w.minimumSizeHint(), w.minimumSize(), w.isHidden()) for w in widgets)
        if key == self.measured:
            return
        shown, least = self.shown, {}
        for k in (1, 0):  # the wide arrangement last: its size hint is the one kept
            self._arrange(k)
            least[k] = super().minimumSize()
        self.wide_hint = super().sizeHint()
        self.least = (least[0], least[1])
        self._arrange(shown)
        self.measured = key

    def minimumSize(self) -> QSize:
        self._measure()
        return QSize(self.least[1].width(), super().minimumSize().height())

    def sizeHint(self) -> QSize:
        self._measure()
        return QSize(self.wide_hint.width(), super().sizeHint().height())

    def setGeometry(self, rect: QRect) -> None:
        self._measure()
        self._arrange(0 if rect.width() >= self.least[0].width() else 1)
        super().setGeometry(rect)


def side_by_side(*widgets: QWidget) -> QWidget:
    """``widgets`` in one row where the room allows, else one under another."""
    grid = ReflowGrid(
        [(w, 0, k, 1) for k, w in enumerate(widgets)],
        [(w, k, 0, 1) for k, w in enumerate(widgets)],
        stretch=(0, 0),
    )
    share_evenly(widgets)
    holder = QWidget()
    holder.setLayout(grid)
    return holder


def share_evenly(widgets: Iterable[QWidget]) -> None:
    """Each of ``widgets`` takes an equal share of the width its row has to spare."""
    for widget in widgets:
        policy = widget.sizePolicy()
        policy.setHorizontalStretch(1)
        widget.setSizePolicy(policy)
