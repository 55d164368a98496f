"""Step 3: the scores Q·Kᵀ, one query-key dot product per cell."""

from __future__ import annotations

from PySide6.QtWidgets import QWidget

from app.panels.qkv import scripts
from app.panels.qkv.state import QKVResult
from app.panels.scripts import Script
from app.panels.step import Live, Notice, Step
from app.widgets import Heatmap
from core.maths import explain


class ScoresPage(Step):
    def __init__(self, live: Live):
        super().__init__(live)
        self.score_map = Heatmap("Scores Q·Kᵀ", signed=True)
        self.score_map.set_describer(lambda i, j: explain.score(self.result.Q, self.result.K, i, j))
        self.layout_with(
            "Step 3: cell (i, j) is query i dotted with key j; the closer the two point the same "
            "way, the larger it is. Hover a cell for its sum.",
            None,
            self.score_map,
        )

    def views(self) -> dict[str, QWidget]:
        return {"scores": self.score_map}

    def script(self) -> Script:
        return scripts.scores(self.state)

    def draw(self, r: QKVResult) -> Notice:
        tokens = r.example.tokens
        self.score_map.set_data(r.trace.scores, tokens, tokens)
        return None
