"""Step 4: the scores divided by √d_k."""

from __future__ import annotations

import numpy as np
from PySide6.QtWidgets import QWidget

from app.panels.qkv import scripts
from app.panels.qkv.state import QKVResult
from app.panels.scripts import Script
from app.panels.step import Live, Notice, Step
from app.widgets import Heatmap
from app.widgets.text import note
from core.maths import explain


class ScaledPage(Step):
    def __init__(self, live: Live):
        super().__init__(live)
        self.scaled_map = Heatmap("Scaled scores", signed=True)
        self.scaled_map.set_describer(lambda i, j: explain.scaled(self.result.trace, i, j))
        self.scale_note = note("")
        self.layout_with(self.scale_note, None, self.scaled_map)

    def views(self) -> dict[str, QWidget]:
        return {"scaled": self.scaled_map}

    def script(self) -> Script:
        return scripts.scaled(self.state)

    def draw(self, r: QKVResult) -> Notice:
        tokens, d_k = r.example.tokens, r.Q.shape[1]
        self.scaled_map.set_data(r.trace.scaled, tokens, tokens)
        self.scale_note.setText(
            f"Step 4: divide by √d_k = √{d_k} = {explain.num(np.sqrt(d_k), 3)}. A sum of d_k products "
            "spreads like √d_k; dividing it out keeps the scores the same size for any d_k."
        )
        return None
