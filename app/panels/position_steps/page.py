"""What every step page of the Position panel shares: settings → one core computation →
the existing views follow; bad input is reported and the views keep their last valid state."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

import pyqtgraph as pg
from PySide6.QtWidgets import QDoubleSpinBox, QFormLayout, QHBoxLayout, QLabel, QSpinBox, QVBoxLayout, QWidget

from app.widgets.controls import note

HEATMAP_ROWS = 512  # longer sequences are shown as this many evenly spaced positions
Notice = tuple[str, str] | None  # (text, level) for the panel's message bar


def spin(value: int, minimum: int, maximum: int, step: int = 1) -> QSpinBox:
    box = QSpinBox()
    box.setRange(minimum, maximum)
    box.setSingleStep(step)
    box.setGroupSeparatorShown(True)
    box.setKeyboardTracking(False)  # recompute when typing is done, not at every digit
    box.setValue(value)
    return box


def base_spin(value: float) -> QDoubleSpinBox:
    """A base box that accepts bad values too, so the page can explain why they are bad."""
    box = QDoubleSpinBox()
    box.setRange(-1e6, 1e9)
    box.setDecimals(1)
    box.setKeyboardTracking(False)
    box.setValue(value)
    return box


def plot(title: str, x: str, y: str) -> pg.PlotWidget:
    """A titled plot with axis labels and a light grid."""
    view = pg.PlotWidget(title=title)
    view.setLabel("bottom", x)
    view.setLabel("left", y)
    view.showGrid(x=True, y=True, alpha=0.25)
    view.setMenuEnabled(False)
    return view


class Page(QWidget):
    """One step: its own settings, one core computation, then the existing views follow.

    Subclasses give ``compute(state)`` (may raise ValueError) and ``draw(result) -> Notice``.
    """

    def __init__(self, state, report: Callable[[Notice], None]):
        super().__init__()
        self.state, self.report, self.notice = state, report, None

    def compute(self, state):
        raise NotImplementedError

    def draw(self, result) -> Notice:
        raise NotImplementedError

    def apply(self, **change) -> None:
        """Try the changed settings; on bad input say why and keep what is on screen."""
        candidate = replace(self.state, **change)
        try:
            result = self.compute(candidate)
        except ValueError as exc:
            self.report((str(exc), "error"))
            return
        self.state = candidate
        self.notice = self.draw(result)
        self.report(self.notice)

    def layout_with(
        self, intro: str, controls: QFormLayout, view: QWidget, notes: tuple[QLabel, ...] = ()
    ) -> None:
        """Intro text on top; the controls, then ``notes``, on the left; the views on the right."""
        column = QVBoxLayout()
        column.addLayout(controls)
        for label in notes:
            column.addWidget(label)
        column.addStretch(1)
        left = QWidget()
        left.setLayout(column)
        left.setMaximumWidth(330)
        row = QHBoxLayout()
        row.addWidget(left)
        row.addWidget(view, 1)
        page = QVBoxLayout(self)
        page.addWidget(note(intro))
        page.addLayout(row, 1)
