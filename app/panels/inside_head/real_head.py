"""Step 1: a real head, step by step: q_i·k_j written out, the scaling, the row's softmax with the
mask, and the weighted sum of the real values. Hover a cell for its sum; click it to choose it."""

from __future__ import annotations

import numpy as np
from PySide6.QtWidgets import QHBoxLayout, QVBoxLayout, QWidget

from app.panels.inside_head import scripts
from app.panels.inside_head.state import HeadResult
from app.panels.inside_head.views import counted_from_one
from app.panels.scripts import Script
from app.panels.step import Live, Notice, Step
from app.widgets import Heatmap
from app.widgets.text import note
from app.widgets.weight_bars import WeightBars
from core.interp.head.step import hidden_by
from core.maths.explain import dot_terms, num

SHOWN = 6  # vector entries written out


def vector(v: np.ndarray) -> str:
    entries = ", ".join(num(x, 2) for x in v[:SHOWN])
    return f"({entries}{', …' if v.size > SHOWN else ''})  [{v.size} numbers]"


class RealHeadPage(Step):
    def __init__(self, live: Live):
        super().__init__(live)
        self.weight_map = Heatmap("Weights of this head", rows="query", cols="key", cell_text=False)
        self.weight_map.set_describer(self._sum_of)
        self.weight_map.clicked.connect(lambda i, j: self.apply(query=i + 1, key=j + 1))
        self.row_bars = WeightBars("The query's row of weights", x_label="key position")
        self.working = note(rich=True)
        views = QHBoxLayout()
        views.addWidget(self.weight_map, 3)
        side = QVBoxLayout()
        side.addWidget(self.working)
        side.addWidget(self.row_bars, 1)
        views.addLayout(side, 2)
        self.layout_with(
            "The real q and k of one head (after rotary where the model uses it), their dot "
            "product term by term, the model's own scaling, the softmax over the query's row "
            "and the weighted sum of the real values. Hover a cell for its sum; click it to "
            "follow that query and key through every step.",
            None,
            views,
        )

    def views(self) -> dict[str, QWidget]:
        return {"weights": self.weight_map}

    def _sum_of(self, i: int, j: int) -> str:
        r = self.result
        hidden = hidden_by(r.model.is_causal, r.step.window, i, j)
        if r.step.scores.size and hidden:
            return f"{hidden}: the mask adds −∞, weight 0"
        return f"q·k = {dot_terms(r.queries[i], r.keys[j])} × {num(r.step.scale, 4)}"

    def script(self) -> Script:
        return scripts.real_head(self.state, self.result.model.kind)

    def draw(self, r: HeadResult) -> Notice:
        s = r.step
        n = len(r.weights)
        seen = [[hidden_by(r.model.is_causal, s.window, i, j) is None for j in range(n)] for i in range(n)]
        shown = np.where(seen, r.weights, np.nan)
        self.weight_map.set_data(shown, r.labels, r.labels, (0.0, 1.0))
        self.weight_map.set_title(f"Weights of layer {s.layer + 1}, head {s.head + 1}")
        self.weight_map.mark(s.i, s.j)
        self.row_bars.set_weights(s.row, s.j)
        counted_from_one(self.row_bars)
        query, key = r.labels[s.i], r.labels[s.j]
        finite = s.scores[np.isfinite(s.scores)]
        softmax = (
            f"exp({num(s.received, 3)} − {num(finite.max(), 3)}) / Σ exp(row − max) = {num(s.weight, 4)}"
            if not s.masked
            else f"{s.hidden}: the mask adds −∞ to its score, exp(−∞) = 0"
        )
        cap = "" if s.cap is None else f"capped: {s.cap:g}·tanh(score/{s.cap:g}) = {num(s.received, 3)}<br>"
        self.working.setText(
            f"<b>query {s.i + 1} {query} → key {s.j + 1} {key}</b> (key/value head {s.kv_head + 1})<br>"
            f"q = {vector(s.q)}<br>k = {vector(s.k)}<br>"
            f"q·k = {dot_terms(s.q, s.k)}<br>"
            f"× scale {num(s.scale, 4)} = score <b>{num(s.score, 3)}</b><br>{cap}"
            f"softmax: {softmax}<br>"
            f"output = Σ weight × v = {vector(s.output)}"
        )
        if r.cut:
            return r.cut, "warning"
        return (
            (f"{s.hidden[0].upper()}{s.hidden[1:]}, so its weight is 0 by the mask.", "info")
            if s.masked
            else None
        )
