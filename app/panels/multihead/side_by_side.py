"""Step 1: every head's weights on one colour scale; click a head to enlarge it with its Q and K."""

from __future__ import annotations

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QSize
from PySide6.QtWidgets import QGridLayout, QHBoxLayout, QVBoxLayout, QWidget

from app.panels.multihead import scripts
from app.panels.multihead.state import MultiHeadResult
from app.panels.scripts import Script
from app.panels.step import Live, Notice, Step
from app.theme import style_plots
from app.widgets import Heatmap
from app.widgets.text import note
from core.maths import explain

GRID_COLUMNS = 8
GRID_SHARE = 1 / 3  # the row of heads gets at most this share of the page's height


def head_color(i: int, heads: int):
    return pg.intColor(i, hues=max(heads, 1), sat=200)


def symmetric(*matrices: np.ndarray) -> tuple[float, float]:
    """One colour range around 0 for several signed matrices, so their colours compare."""
    top = max(float(np.abs(m).max()) for m in matrices)
    return (-top, top) if top > 0 else (-1.0, 1.0)


class HeadRow(QWidget):
    """The heads' maps in rows of up to GRID_COLUMNS, as many to a row as fit the width (a map
    keeps its title whole). Asks for the height its page works out (square maps), and makes do
    with the maps' least height where the page is short."""

    def __init__(self):
        super().__init__()
        self.grid = QGridLayout(self)
        self.grid.setSpacing(4)
        self.grid.setContentsMargins(0, 0, 0, 0)
        self.maps: list[Heatmap] = []
        self.columns, self.wanted = 1, 0

    @property
    def rows(self) -> int:
        return -(-len(self.maps) // self.columns)

    def show_maps(self, maps: list[Heatmap]) -> None:
        """Lay out ``maps`` (the others in the grid are hidden)."""
        for heatmap in self.maps:
            heatmap.setVisible(heatmap in maps)
        self.maps, self.columns = maps, 0
        self._arrange()

    def _arrange(self) -> None:
        """Put the maps in as many columns as fit the width, if that changed."""
        if not self.maps:
            return
        widest = max((m.minimumSizeHint().width() for m in self.maps), default=0)
        spacing, columns = self.grid.spacing(), min(len(self.maps), GRID_COLUMNS)
        while columns > 1 and columns * widest + (columns - 1) * spacing > self.width():
            columns -= 1
        columns = -(-len(self.maps) // -(-len(self.maps) // columns))  # rows filled evenly
        if columns != self.columns:
            self.columns = columns
            for i, heatmap in enumerate(self.maps):
                self.grid.removeWidget(heatmap)
                self.grid.addWidget(heatmap, i // columns, i % columns)
                heatmap.show()
            for row in range(self.grid.rowCount()):
                self.grid.setRowStretch(row, 1 if row < self.rows else 0)
            self.updateGeometry()

    def ask(self, height: int) -> None:
        if height != self.wanted:
            self.wanted = height
            self.updateGeometry()

    def minimumSizeHint(self) -> QSize:
        """One map wide (more columns when there is room), the current rows tall."""
        least = super().minimumSizeHint()
        widest = max((m.minimumSizeHint().width() for m in self.maps), default=0)
        return QSize(widest, least.height())

    def sizeHint(self) -> QSize:
        return QSize(super().sizeHint().width(), max(self.wanted, self.minimumSizeHint().height()))

    def resizeEvent(self, event) -> None:
        self._arrange()
        super().resizeEvent(event)


class Rest(QWidget):
    """Takes the height left over: asks for no more than its least, so the row of heads above it
    gets what it asks for first."""

    def sizeHint(self) -> QSize:
        return QSize(super().sizeHint().width(), self.minimumSizeHint().height())

    def hasHeightForWidth(self) -> bool:
        return False  # else its wrapped readout makes the layout take its full height as its least


class HeadsPage(Step):
    NAMED = ""  # what its exported views' names begin with
    CAPTION = (
        "Every head runs its own soft lookup over the same tokens, in its own d_k-dimensional space. "
        "All heads share one colour scale, so colours compare across heads. Click a head to enlarge "
        "it and see its queries and keys."
    )

    def __init__(self, live: Live):
        super().__init__(live)
        self.selected = 0
        self.grid_maps: list[Heatmap] = []
        self.grid_heads = 0
        self.titled: tuple[int, int] | None = None
        self.caption = note(self.CAPTION)
        self.grid_box = HeadRow()
        self.detail_map = Heatmap("")
        self.detail_map.set_describer(
            lambda i, j: explain.weight(self.result.trace.heads[self.selected], i, j)
        )
        self.q_map = Heatmap("Q", signed=True, colorbar=False, cell_text=False)
        self.k_map = Heatmap("K", signed=True, colorbar=False, cell_text=False)
        qk = QVBoxLayout()
        qk.addWidget(self.q_map)
        qk.addWidget(self.k_map)
        detail = Rest()
        detail_row = QHBoxLayout(detail)
        detail_row.setContentsMargins(0, 0, 0, 0)
        detail_row.addWidget(self.detail_map, 2)
        detail_row.addLayout(qk, 1)
        # The row of heads on top chooses the head shown large below.
        self.layout_with(self.caption, self.grid_box, detail, on_top=True, flush=True)

    def views(self) -> dict[str, QWidget]:
        shown = {f"{self.NAMED}head_{i}": m for i, m in enumerate(self.grid_maps[: self.state.heads])}
        return shown | {f"{self.NAMED}enlarged_head": self.detail_map}

    @property
    def trace(self):
        return self.result.trace

    def shared_levels(self) -> tuple[float, float]:
        """One colour scale for every head: 0 up to the largest weight of any head."""
        top = float(self.result.trace.weights.max())
        return 0.0, top if top > 0 else 1.0

    def _grid_map(self, i: int) -> Heatmap:
        """The grid's heatmap for head i, built the first time that many heads are shown."""
        while len(self.grid_maps) <= i:
            k = len(self.grid_maps)
            heatmap = Heatmap(f"head {k}", colorbar=False, cell_text=False, labels=False)
            heatmap.set_describer(lambda r, c, k=k: explain.weight(self.result.trace.heads[k], r, c))
            heatmap.clicked.connect(lambda _r, _c, k=k: self.select_head(k))
            heatmap.plot.setAspectLocked(True)  # a T × T map: square cells, however the row is sized
            style_plots(heatmap)
            if not k:  # its margins are measured when it is laid out: fit the row to them
                heatmap.plot.vb.sigResized.connect(self._fit_grid)
            self.grid_maps.append(heatmap)
        return self.grid_maps[i]

    def select_head(self, i: int) -> None:
        """Enlarge head i and show its queries and keys (a view choice: no state changes)."""
        self.selected = min(max(int(i), 0), len(self.result.trace.heads) - 1)
        if not self.stale:
            self._show_selected(self.result)

    def script(self) -> Script:
        return scripts.heads(self.state, self.selected)

    def draw(self, r: MultiHeadResult) -> Notice:
        h, tokens, levels = len(r.trace.heads), r.tokens, self.shared_levels()
        self.selected = min(self.selected, h - 1)
        for i, head in enumerate(r.trace.heads):
            self._grid_map(i).set_data(head.weights, tokens, tokens, levels=levels)
        self._show_selected(r)  # titles first: a map's title sets its least width
        if self.grid_heads != h:  # lay the grid out again only when the head count changes
            self.grid_box.show_maps(self.grid_maps[:h])
            self.grid_heads = h
            self._fit_grid()
        return None

    def _fit_grid(self) -> None:
        """Give the row of heads the height its square maps need at the page's width, up to
        GRID_SHARE of the page's height; the enlarged head takes the rest."""
        if not self.grid_heads:
            return
        columns, rows, spacing = self.grid_box.columns, self.grid_box.rows, self.grid_box.grid.spacing()
        first = self.grid_maps[0]
        box = first.plot.vb.size()
        if box.width() > 0 and first.height() > 0:  # what a map adds around its cells: title, margins
            wide, tall = first.width() - box.width(), first.height() - box.height()
        else:
            wide, tall = 0.0, 2.0 * first.fontMetrics().height()
        side = (self.width() - spacing * (columns - 1)) / columns - wide
        needed = rows * (max(side, 0.0) + tall) + spacing * (rows - 1)
        self.grid_box.ask(round(min(needed, GRID_SHARE * self.height())))

    def resizeEvent(self, event) -> None:
        super().resizeEvent(event)
        self._fit_grid()

    def _show_selected(self, r: MultiHeadResult) -> None:
        i, h, tokens, t = self.selected, len(r.trace.heads), r.tokens, r.trace
        if self.titled != (i, h):  # titles are rich text, slow to lay out: only when they change
            for k, heatmap in enumerate(self.grid_maps[:h]):
                color = head_color(k, h).name()
                name = f"head {k}" if h <= GRID_COLUMNS else str(k)
                name = f"<b>{name}</b>" if k == i else name
                heatmap.set_title(f"<span style='color:{color}'>■</span> {name}")
            self.titled = (i, h)
        d_k = t.queries.shape[-1]
        self.detail_map.set_title(f"Head {i}, enlarged")
        self.detail_map.set_data(t.heads[i].weights, tokens, tokens, levels=self.shared_levels())
        dims = [str(k) for k in range(d_k)]
        q_k_levels = symmetric(t.queries[i], t.keys[i])
        self.q_map.set_title(f"Q = X·W_Q[{i}]  ({len(tokens)} × {d_k})")
        self.q_map.set_data(t.queries[i], tokens, dims, levels=q_k_levels)
        self.k_map.set_title(f"K = X·W_K[{i}]  ({len(tokens)} × {d_k})")
        self.k_map.set_data(t.keys[i], tokens, dims, levels=q_k_levels)
