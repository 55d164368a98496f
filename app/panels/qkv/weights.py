"""Step 5: softmax turns each row of scaled scores into weights that sum to 1."""

from __future__ import annotations

from PySide6.QtWidgets import QWidget

from app.panels.qkv import scripts
from app.panels.qkv.state import QKVResult
from app.panels.scripts import Script
from app.panels.step import Live, Notice, Step
from app.widgets import Heatmap
from app.widgets.text import note
from core.maths import explain


class WeightsPage(Step):
    def __init__(self, live: Live):
        super().__init__(live)
        self.weight_map = Heatmap("Weights softmax(scaled)", signed=False)
        self.weight_map.set_describer(lambda i, j: explain.weight(self.result.trace, i, j))
        self.sum_note = note("")
        self.layout_with(self.sum_note, None, self.weight_map)

    def views(self) -> dict[str, QWidget]:
        return {"weights": self.weight_map}

    def script(self) -> Script:
        return scripts.weights(self.state)

    def draw(self, r: QKVResult) -> Notice:
        tokens, t = r.example.tokens, r.trace
        self.weight_map.set_data(t.weights, tokens, tokens, levels=(0.0, 1.0))
        sums = " ".join(explain.num(v) for v in t.weights.sum(axis=1))
        self.sum_note.setText(
            "Step 5: softmax makes every entry positive and scales each row to a total of 1; cell "
            f"(i, j) is the share of token j's value that token i takes. Row sums: {sums}."
        )
        return None
