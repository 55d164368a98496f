"""Step 1: kinds of mask: the mask (click a cell to switch it), the scores it hides, the weights,
and per query how many keys are computed and how much weight reaches hidden ones."""

from __future__ import annotations

import numpy as np
from PySide6.QtWidgets import QGridLayout, QVBoxLayout, QWidget

from app.panels.masks import scripts
from app.panels.masks.state import MasksResult, as_grid, key_labels, leak_text, unpadded
from app.panels.scripts import Script
from app.panels.step import Live, Notice, Step
from app.widgets import Heatmap
from app.widgets.colors import default_levels
from app.widgets.tables import fill_table, text_table
from app.widgets.text import note, scrolling
from core.maths import explain


class KindsPage(Step):
    def __init__(self, live: Live):
        super().__init__(live)
        self.mask_map = Heatmap("Mask: bright = may attend", colorbar=False, cell_text=False)
        self.mask_map.set_describer(self._describe_mask)
        self.mask_map.clicked.connect(self.toggle_cell)
        self.score_map = Heatmap("Scaled scores, hidden = −∞", signed=True)
        self.score_map.set_describer(self._describe_score)
        self.weight_map = Heatmap("Weights")
        self.weight_map.set_describer(lambda i, j: explain.weight(self.result.trace, i, j))
        self.cost_note = note()
        self.row_table = text_table(["keys computed", "weight on\nhidden keys"])  # narrow beside the maps
        grid = QGridLayout()
        grid.addWidget(self.mask_map, 0, 0)
        grid.addWidget(self.score_map, 0, 1)
        grid.addWidget(self.weight_map, 1, 0)
        side = QVBoxLayout()
        side.addWidget(scrolling(self.cost_note))  # large text on a small screen: it scrolls
        side.addWidget(self.row_table, 1)
        grid.addLayout(side, 1, 1)
        self.layout_with(
            "Choose a mask above, or click cells of the mask to switch them. Hidden cells get "
            "the score −∞, so their weight is exactly 0 and each row's weights still add up to 1.",
            None,
            grid,
        )

    def views(self) -> dict[str, QWidget]:
        return {"mask": self.mask_map, "scores": self.score_map, "weights": self.weight_map}

    def toggle_cell(self, i: int, j: int) -> None:
        """Switch cell (i, j) of the mask; the mask becomes custom, starting from the current one."""
        grid = unpadded(self.result)
        grid[i, j] = not grid[i, j]
        self.apply(kind="custom", custom=as_grid(grid))

    def script(self) -> Script:
        return scripts.kinds(self.state)

    def draw(self, r: MasksResult) -> Notice:
        tokens, keys = r.example.tokens, key_labels(r)
        n = len(tokens)
        self.mask_map.set_data(r.mask.astype(float), tokens, keys, levels=(0.0, 1.0))
        # colours from every score, hidden or not: a cell keeps its colour when the mask changes
        self.score_map.set_data(r.trace.masked, tokens, keys, default_levels(r.trace.scaled, signed=True))
        self.weight_map.set_data(r.trace.weights, tokens, keys, levels=(0.0, 1.0))
        c = r.cost
        leak = "exactly 0 in every row" if np.all(r.leak == 0) else f"up to {leak_text(float(r.leak.max()))}"
        self.cost_note.setText(
            f"Computed cells: {c.computed} of {c.total} = {n}² ({100 * c.fraction:.1f} %). "
            f"A kernel that skips hidden cells saves {100 * c.saving:.1f} %. Weight on hidden keys: {leak}."
        )
        cells = [[f"{k} of {n}", leak_text(v)] for k, v in zip(c.per_row, r.leak, strict=True)]
        fill_table(self.row_table, cells, tokens)
        return r.notice

    def _describe_mask(self, i: int, j: int) -> str:
        r = self.result
        s, n = r.state, r.mask.shape[0]
        if r.mask[i, j]:
            return "may attend: this score is computed"
        if j >= n - s.n_pad:
            return "hidden: a padding key"
        if s.kind == "custom":
            return "hidden: switched off (click to switch on)"
        if j > i and (s.kind == "causal" or not s.symmetric):
            return "hidden: a later token (the future)"
        return "hidden: outside the window"

    def _describe_score(self, i: int, j: int) -> str:
        if not self.result.mask[i, j]:
            return "hidden by the mask, so the score is set to −∞ before the softmax"
        return explain.scaled(self.result.trace, i, j)
