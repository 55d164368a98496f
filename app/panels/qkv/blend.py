"""Step 6: the weighted sum of values, weights · V = output; click a cell for its sum."""

from __future__ import annotations

from PySide6.QtWidgets import QWidget

from app.panels.qkv import scripts
from app.panels.qkv.state import QKVResult
from app.panels.scripts import Script
from app.panels.step import Live, Notice, Step
from app.widgets import MatrixView
from app.widgets.product_view import ProductView
from app.widgets.text import note
from core.maths import explain


class BlendPage(Step):
    def __init__(self, live: Live):
        super().__init__(live)
        self.blend = ProductView(MatrixView("weights", signed=False), MatrixView("V"), MatrixView("output"))
        self.blend.set_explainer(lambda i, k: explain.blend(self.result.trace, self.result.V, i, k))
        self.output_note = note("")
        self.layout_with(self.output_note, None, self.blend)

    def views(self) -> dict[str, QWidget]:
        return {"output weights": self.blend.a, "values": self.blend.b, "output": self.blend.c}

    def script(self) -> Script:
        return scripts.output(self.state)

    def draw(self, r: QKVResult) -> Notice:
        tokens, t = r.example.tokens, r.trace
        cols = [str(k) for k in range(r.V.shape[1])]
        self.blend.a.set_data(t.weights, tokens, tokens, levels=(0.0, 1.0))
        self.blend.b.set_data(r.V, tokens, cols)
        self.blend.c.set_data(t.output, tokens, cols)
        self.blend.refresh()
        focus = 1 if len(tokens) > 1 else 0
        vector = ", ".join(explain.num(v) for v in t.output[focus])
        self.output_note.setText(
            "Step 6: output row i is Σⱼ weight(i, j) × value j, every value in the share row i gives it. "
            f"New vector for “{tokens[focus]}”: [{vector}]. Click a cell of the output."
        )
        return None
