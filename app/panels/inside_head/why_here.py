"""Step 2: why here. The score split into query part × key part terms: the residual stream at the
query and at the key as sums of parts (embeddings, each earlier head, each earlier MLP, biases),
the norm's scale frozen. Click a head in the key-side map to open it."""

from __future__ import annotations

import numpy as np
from PySide6.QtWidgets import QWidget

from app.panels.inside_head import scripts
from app.panels.inside_head.state import PartsResult, per_head
from app.panels.inside_head.views import PartsStep
from app.panels.scripts import Script
from app.panels.step import Live, Notice
from app.widgets import Heatmap
from app.widgets.reflow_grid import side_by_side
from app.widgets.text import note
from core.maths.explain import num

LISTED = 8


def head_map(title: str) -> Heatmap:
    return Heatmap(title, signed=True, cell_text=False, rows="layer", cols="head")


def listed(names, values, n: int = LISTED) -> str:
    order = np.argsort(-np.abs(values))[:n]
    return ", ".join(f"{names[k]} {num(values[k], 3)}" for k in order)


def outside(names, values) -> str:
    """The total of the parts the maps do not show: embeddings and biases."""
    return num(sum(v for n, v in zip(names, values, strict=True) if not n.startswith("L")), 3)


class WhyHerePage(PartsStep):
    def __init__(self, live: Live):
        super().__init__(live)
        self.query_map = head_map("Query side: each part's share")
        self.key_map = head_map("Key side: each part's share")
        self.key_map.clicked.connect(self._open)
        self.summary = note(rich=True)
        self.layout_with(
            "With the norm's scale frozen at this run's value, q and k are linear in the parts "
            "of the residual stream, so the score is an exact sum of query-part × key-part "
            "terms. Each map shows a part's total share (columns: the heads, then the MLP). "
            "Click a head in the key-side map to open it.",
            None,
            side_by_side(self.query_map, self.key_map),
            notes=(self.summary,),
        )

    def views(self) -> dict[str, QWidget]:
        return {"query_side": self.query_map, "key_side": self.key_map}

    def _open(self, layer: int, column: int) -> None:
        if column < self.result.model.n_heads:
            self.apply(layer=layer + 1, head=column + 1)

    def script(self) -> Script:
        return scripts.why_here(self.state, self.result.model.kind, self.why_not)

    def show(self, r: PartsResult) -> Notice:
        if r.split is None:
            for view in (self.query_map, self.key_map):
                view.clear()
            self.summary.setText(r.why_not)
            return (r.why_not, "warning")
        split, layer = r.split, r.layer
        heads = r.model.n_heads
        columns = [str(h + 1) for h in range(heads)] + ["MLP"]
        sides = ((split.query_parts, split.query_totals), (split.key_parts, split.key_totals))
        for view, (names, totals) in zip((self.query_map, self.key_map), sides, strict=True):
            grid = per_head(names, totals, max(layer, 1), heads)
            reach = float(np.nanmax(np.abs(grid))) if np.isfinite(grid).any() else 1.0
            view.set_data(grid, [str(k + 1) for k in range(max(layer, 1))], columns, (-reach, reach))
        (q_names, q_totals), (k_names, k_totals) = sides
        pairs = "<br>".join(f"{a} × {b}: {num(v, 3)}" for a, b, v in split.largest(LISTED))
        self.summary.setText(
            f"Score {num(split.score, 4)} = the query parts' sum {num(q_totals.sum(), 4)} = "
            f"the key parts' sum {num(k_totals.sum(), 4)}.<br>"
            f"Embeddings and biases (not in the maps): query side {outside(q_names, q_totals)}, "
            f"key side {outside(k_names, k_totals)}.<br>"
            f"<b>Query side</b>: {listed(q_names, q_totals)}<br>"
            f"<b>Key side</b>: {listed(k_names, k_totals)}<br>"
            f"<b>Largest terms</b>:<br>{pairs}"
        )
        return (split.note, "info") if split.note else None  # Gemma 2 caps the score after the sum
