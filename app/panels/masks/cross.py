"""Step 3: cross-attention: queries from one text, keys and values from another, a rectangle."""

from __future__ import annotations

from PySide6.QtWidgets import QFormLayout, QLineEdit, QVBoxLayout, QWidget

from app.panels.masks import scripts
from app.panels.masks.state import D_K, MasksResult
from app.panels.scripts import Script
from app.panels.step import Live, Notice, Step
from app.widgets import Heatmap
from app.widgets.text import note
from core.maths import explain

CROSS_NOTE = (
    "Rows from one text, columns from another: a T5 decoder reading its encoded source, or "
    "Stable Diffusion's image layers reading the encoded prompt."
)


class CrossPage(Step):
    def __init__(self, live: Live):
        super().__init__(live)
        s = self.state
        self.queries_edit = self.bind(QLineEdit(s.queries), "queries")
        self.keys_edit = self.bind(QLineEdit(s.keys), "keys")
        form = QFormLayout()
        form.addRow("Queries from (decoder)", self.queries_edit)
        form.addRow("Keys and values from (encoder)", self.keys_edit)
        self.cross_map = Heatmap("Cross-attention weights")
        self.cross_map.set_describer(lambda i, j: explain.weight(self.result.cross, i, j))
        self.cross_note = note()
        layout = QVBoxLayout()
        layout.addLayout(form)
        layout.addWidget(self.cross_note)
        layout.addWidget(self.cross_map, 1)
        self.layout_with(
            f"{CROSS_NOTE} One sequence asks (Q), the other answers (K and V), through the same "
            "projections. The weights are a rectangle: one row per query token, one column per key "
            "token. The weights are random, so the pattern carries no meaning here.",
            None,
            layout,
        )

    def views(self) -> dict[str, QWidget]:
        return {"cross_attention": self.cross_map}

    def script(self) -> Script:
        return scripts.cross(self.state)

    def draw(self, r: MasksResult) -> Notice:
        q_tokens, kv_tokens = r.cross_tokens
        self.cross_map.set_data(r.cross.weights, q_tokens, kv_tokens, levels=(0.0, 1.0))
        n_q, n_k = r.cross.weights.shape
        sums = " ".join(explain.num(v) for v in r.cross.weights.sum(axis=1))
        self.cross_note.setText(
            f"Q {n_q}×{D_K} from the decoder, K and V {n_k}×{D_K} from the encoder → weights "
            f"{n_q}×{n_k}, output {n_q}×{D_K}. Row sums: {sums}."
        )
        return r.notice
