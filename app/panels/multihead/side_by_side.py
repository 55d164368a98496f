"""Step 1: every head's weights on one colour scale; click a head to enlarge it with its Q and K."""

from __future__ import annotations

import numpy as np
import pyqtgraph as pg
from PySide6.QtWidgets import QGridLayout, QHBoxLayout, QVBoxLayout, QWidget

from app.panels.multihead.state import MultiHeadResult
from app.panels.step import Live, Notice, Step
from app.theme import style_plots
from app.widgets import Heatmap
from app.widgets.controls import note
from core import explain

GRID_COLUMNS = 8


def head_color(i: int, heads: int):
    return pg.intColor(i, hues=max(heads, 1), sat=200)


def symmetric(*matrices: np.ndarray) -> tuple[float, float]:
    """One colour range around 0 for several signed matrices, so their colours compare."""
    top = max(float(np.abs(m).max()) for m in matrices)
    return (-top, top) if top > 0 else (-1.0, 1.0)


class HeadsPage(Step):
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
        self.grid = QGridLayout()
        self.grid.setSpacing(4)
        self.grid.setContentsMargins(0, 0, 0, 0)
        grid_box = QWidget()
        grid_box.setLayout(self.grid)
        self.detail_map = Heatmap("")
        self.detail_map.set_describer(
            lambda i, j: explain.weight(self.result.trace.heads[self.selected], i, j)
        )
        self.q_map = Heatmap("Q", signed=True, colorbar=False, cell_text=False)
        self.k_map = Heatmap("K", signed=True, colorbar=False, cell_text=False)
        qk = QVBoxLayout()
        qk.addWidget(self.q_map)
        qk.addWidget(self.k_map)
        detail = QHBoxLayout()
        detail.addWidget(self.detail_map, 2)
        detail.addLayout(qk, 1)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.caption)
        layout.addWidget(grid_box, 2)
        layout.addLayout(detail, 3)

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
            style_plots(heatmap)
            self.grid_maps.append(heatmap)
        return self.grid_maps[i]

    def select_head(self, i: int) -> None:
        """Enlarge head i and show its queries and keys (a view choice: no state changes)."""
        self.selected = min(max(int(i), 0), len(self.result.trace.heads) - 1)
        if not self.stale:
            self._show_selected(self.result)

    def draw(self, r: MultiHeadResult) -> Notice:
        h, tokens, levels = len(r.trace.heads), r.tokens, self.shared_levels()
        self.selected = min(self.selected, h - 1)
        for i, head in enumerate(r.trace.heads):
            self._grid_map(i).set_data(head.weights, tokens, tokens, levels=levels)
        if self.grid_heads != h:  # lay the grid out again only when the head count changes
            columns = min(h, GRID_COLUMNS)
            for i, heatmap in enumerate(self.grid_maps):
                if i < h:
                    self.grid.addWidget(heatmap, i // columns, i % columns)
                heatmap.setVisible(i < h)
            self.grid_heads = h
        self._show_selected(r)
        return None

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
