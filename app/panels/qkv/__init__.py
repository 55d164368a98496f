"""Panel "Q, K, V step by step": from static embeddings to softmax(Q·Kᵀ/√d_k)·V, one step at a time.

One state for every step (``state.py``): the settings on the left change it, each step shows one
stage of the computation, and the diagram below the settings lights the stage shown.
"""

from __future__ import annotations

from dataclasses import asdict

from PySide6.QtWidgets import QFormLayout, QHBoxLayout, QLineEdit, QPushButton, QVBoxLayout, QWidget

from app.panels.base import Panel
from app.panels.binding import bind
from app.panels.qkv.blend import BlendPage
from app.panels.qkv.embeddings import EmbeddingsPage
from app.panels.qkv.projections import ProjectionPage
from app.panels.qkv.scaled import ScaledPage
from app.panels.qkv.scores import ScoresPage
from app.panels.qkv.state import QKVState, compute_qkv
from app.panels.qkv.weights import WeightsPage
from app.panels.step import Live
from app.widgets.sdpa_diagram import SdpaDiagram
from app.widgets.side_column import side_column
from app.widgets.spin_boxes import spin

DIAGRAM_BOX = (None, "inputs", "matmul", "scale", "softmax", "output")


class QKVPanel(Panel):
    steps = (
        "Tokens and embeddings",
        "Projections Q, K, V",
        "Scores Q·Kᵀ",
        "Scale by √dₖ",
        "Softmax",
        "Weighted sum of values",
    )

    def __init__(self, parent=None):
        super().__init__(parent)
        self.live = Live(QKVState(), compute_qkv)
        row = QHBoxLayout()
        row.addWidget(self._controls())
        self.body.addLayout(row)
        self.embeddings, self.projections = EmbeddingsPage(self.live), ProjectionPage(self.live)
        self.scores, self.scaled = ScoresPage(self.live), ScaledPage(self.live)
        self.weights, self.output = WeightsPage(self.live), BlendPage(self.live)
        self.add_steps(
            self.embeddings, self.projections, self.scores, self.scaled, self.weights, self.output, into=row
        )
        self.live.changed.connect(self._show_shapes)
        self._show_shapes()
        self.set_step(0)

    def _controls(self) -> QWidget:
        s, live = self.live.state, self.live
        self.tokens_edit = bind(QLineEdit(s.text), live, "text")
        self.tokens_edit.setPlaceholderText("words separated by spaces")
        self.d_model_spin = bind(spin(s.d_model, 0, 512, tracking=True), live, "d_model")
        self.d_k_spin = bind(spin(s.d_k, 0, 256, tracking=True), live, "d_k")
        self.seed_spin = bind(spin(s.seed, 0, 2**31 - 1, tracking=True), live, "seed")
        self.reset_button = QPushButton("Reset")
        self.reset_button.setToolTip("Back to the article's example: 4 tokens, d_model 8, d_k 4, seed 0")
        self.reset_button.clicked.connect(self.reset)
        text = QFormLayout()  # the text gets the column's whole width, under its label
        text.setRowWrapPolicy(QFormLayout.RowWrapPolicy.WrapAllRows)
        text.addRow("Tokens", self.tokens_edit)
        form = QFormLayout()
        form.addRow("d_model", self.d_model_spin)
        form.addRow("d_k", self.d_k_spin)
        form.addRow("Seed", self.seed_spin)
        form.addRow(self.reset_button)
        self.diagram = SdpaDiagram()
        left = QVBoxLayout()
        left.addLayout(text)
        left.addLayout(form)
        left.addWidget(self.diagram, 1)
        return side_column(left)

    @property
    def example(self):
        return self.live.result.example

    @property
    def trace(self):
        return self.live.result.trace

    def _show_shapes(self) -> None:
        n, d_k = self.live.result.Q.shape
        self.diagram.set_shapes(n, n, d_k, d_k)

    def reset(self) -> None:
        """Back to the seeded example of the first article (the cat sat down, 8 → 4, seed 0)."""
        self.live.apply(**asdict(QKVState()))

    def show_step(self, i: int) -> None:
        super().show_step(i)
        self.diagram.set_active(DIAGRAM_BOX[i])

    def exercise(self) -> None:
        self.tokens_edit.setText("")
        self.tokens_edit.setText(" ".join(["tok"] * 500))
        self.tokens_edit.setText("the cat saw the dog and the dog saw the cat")
        self.d_k_spin.setValue(0)
        self.d_k_spin.setValue(256)
        self.d_model_spin.setValue(1)
        self.seed_spin.setValue(7)
        x = self.embeddings.x_view
        x.model.setData(x.model.index(0, 0), "nan")
        x.model.setData(x.model.index(0, 0), "1.5")
        self.set_step(1)
        for name in "KVQ":
            self.projections.set_projection(name)
        self.projections.proj.select(1, 0)
        self.reset()
        super().exercise()
        self.output.blend.select(1, 0)
