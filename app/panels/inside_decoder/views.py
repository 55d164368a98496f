"""Views the steps of the Inside a decoder panel share: a layers × heads map with knocked-out
heads crossed, and token text made readable."""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np
import pyqtgraph as pg
from PySide6.QtWidgets import QCheckBox, QHBoxLayout, QVBoxLayout, QWidget

from app.panels.inside_decoder.state import top_tokens
from app.widgets import Heatmap
from app.widgets.text import note
from app.widgets.token_bars import TokenBars
from core.interp.token_text import visible

CROSS = "#d62728"
FIRST_TOKEN = "Knock out the first token too"
FIRST_TOKEN_NOTE = (
    "The first token is left alone by default. Many heads park their attention there when they "
    "have nothing to do (an attention sink, step 4), so what a head writes at the first token "
    "reaches every later token. Overwriting it can make a head look important for a sentence "
    "only because the sink was disturbed."
)


class HeadMap(Heatmap):
    """One value per head, rows = layers and columns = heads (both counted from 1 on screen);
    ``set_knocked(heads)`` crosses the knocked-out (layer, head) cells. Clicking a cell emits
    ``clicked(layer, head)``, 0-based."""

    plot_parts = Heatmap.plot_parts | {"crosses"}

    def __init__(self, title: str, signed: bool = False):
        super().__init__(title, signed=signed, cell_text=False)
        self.knocked: list[tuple[int, int]] = []

    def _build(self) -> None:
        super()._build()
        self.crosses = pg.ScatterPlotItem(symbol="x", size=11, pen=pg.mkPen(CROSS, width=2), brush=CROSS)
        self.crosses.setZValue(20)
        self.plot.addItem(self.crosses)
        self._cross()

    def set_scores(self, scores: np.ndarray, levels: tuple[float, float] | None = None) -> None:
        layers, heads = scores.shape
        self.set_data(scores, [str(i + 1) for i in range(layers)], [str(j + 1) for j in range(heads)], levels)

    def describe(self, i: int, j: int) -> str:
        return f"layer {i + 1}, head {j + 1}: {self.values[i, j]:.3f}"

    def set_knocked(self, heads: Iterable[tuple[int, int]]) -> None:
        self.knocked = list(heads)
        if self.built:
            self._cross()

    def _cross(self) -> None:
        cells = self.knocked
        self.crosses.setData(x=[h + 0.5 for _, h in cells], y=[layer + 0.5 for layer, _ in cells])


def toggled(heads: tuple[tuple[int, int], ...], *changed: tuple[int, int]) -> tuple[tuple[int, int], ...]:
    """``heads`` with ``changed`` added, or removed when they were all in already; sorted."""
    now = set(heads)
    return tuple(sorted(now - set(changed) if set(changed) <= now else now | set(changed)))


def toggle_on_click(view: HeadMap, step) -> None:
    """Clicking a head in ``view`` knocks it out in ``step``'s state (a Step whose state has
    ``heads``), or puts it back."""
    view.clicked.connect(lambda layer, head: step.apply(heads=toggled(step.state.heads, (layer, head))))


def show_top(view: TokenBars, model, probs: np.ndarray) -> None:
    """The most probable next tokens under ``probs`` (vocab,) as bars, the rest summed."""
    top = top_tokens(model, probs)
    rest = 1.0 - sum(p for _, p in top)
    view.set_bars([visible(t) for t, _ in top], [p for _, p in top], [True] * len(top), rest)


def map_over_pair(grid: QWidget, left: QWidget, right: QWidget) -> QWidget:
    """The head map on top, two predictions side by side below it."""
    pair = QHBoxLayout()
    pair.addWidget(left)
    pair.addWidget(right)
    column = QVBoxLayout()
    column.addWidget(grid, 3)
    column.addLayout(pair, 2)
    views = QWidget()
    views.setLayout(column)
    return views


def first_token_box(step) -> QCheckBox:
    """The check box that knocks heads out at the first token too (``first`` in ``step``'s state)."""
    return step.bind(QCheckBox(FIRST_TOKEN), "first")


def first_token_note() -> QWidget:
    """Why the first token is left alone, in a sentence or two."""
    return note(FIRST_TOKEN_NOTE)
