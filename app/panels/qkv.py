"""Panel "Q, K, V step by step": from static embeddings to softmax(Q·Kᵀ/√d_k)·V, one step at a time."""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np
from PySide6.QtWidgets import (
    QButtonGroup,
    QFormLayout,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPushButton,
    QRadioButton,
    QSpinBox,
    QStackedWidget,
    QVBoxLayout,
    QWidget,
)

from app.panels.base import Panel
from app.widgets import Heatmap, MatrixView
from app.widgets.controls import note, side_column
from app.widgets.product_view import ProductView
from app.widgets.sdpa_diagram import SdpaDiagram
from core import explain
from core.attention import AttentionTrace, attend
from core.qkv import Example, random_example, retokenize, tokenize, vocabulary


@dataclass(frozen=True)
class Settings:
    text: str = "the cat sat down"
    d_model: int = 8
    d_k: int = 4
    seed: int = 0


DIAGRAM_BOX = (None, "inputs", "matmul", "scale", "softmax", "output")


class QKVPanel(Panel):
    key = "qkv"
    title = "Q, K, V step by step"
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
        self.settings = Settings()
        self.example: Example = random_example(tokenize(self.settings.text), 8, 4, 0)
        self.projection = "Q"
        self.stale: set[int] = set()
        self._build()
        self._recompute()
        self.set_step(0)

    # --- layout -----------------------------------------------------------------------------
    def _build(self) -> None:
        s = self.settings
        self.tokens_edit = QLineEdit(s.text)
        self.tokens_edit.setPlaceholderText("words separated by spaces")
        self.d_model_spin = self._spin(s.d_model, 512)
        self.d_k_spin = self._spin(s.d_k, 256)
        self.seed_spin = self._spin(s.seed, 2**31 - 1)
        self.reset_button = QPushButton("Reset")
        self.reset_button.setToolTip("Back to the article's example: 4 tokens, d_model 8, d_k 4, seed 0")
        form = QFormLayout()
        form.addRow("Tokens", self.tokens_edit)
        form.addRow("d_model", self.d_model_spin)
        form.addRow("d_k", self.d_k_spin)
        form.addRow("Seed", self.seed_spin)
        form.addRow(self.reset_button)
        self.diagram = SdpaDiagram()
        left = QVBoxLayout()
        left.addLayout(form)
        left.addWidget(self.diagram, 1)
        left_box = side_column(left)

        self.x_view = MatrixView("X (embeddings)", editable=True)
        self.x_view.set_describer(self._describe_x)
        self.pages = QStackedWidget()
        self.pages.addWidget(
            self._page(
                "One table row per token, picked by the token alone: a word typed twice gets the same "
                "row twice, whatever surrounds it. Double-click a number to edit it; every copy of "
                "that token follows.",
                self.x_view,
            )
        )

        self.proj = ProductView(MatrixView("X"), MatrixView("W_Q"), MatrixView("Q"))
        self.proj.set_explainer(self._describe_projection)
        self.proj_buttons = QButtonGroup(self)
        choice = QHBoxLayout()
        choice.addWidget(QLabel("Projection:"))
        for name in "QKV":
            button = QRadioButton(f"{name} = X·W_{name}")
            button.setChecked(name == "Q")
            button.setProperty("projection", name)
            self.proj_buttons.addButton(button)
            choice.addWidget(button)
        choice.addStretch(1)
        self.proj_buttons.buttonClicked.connect(lambda b: self._set_projection(b.property("projection")))
        page = self._page(
            "W_Q, W_K and W_V turn the same embedding into three vectors: a query to search with, "
            "a key to be compared with, a value to hand over. Every number of the result is one "
            "row-times-column sum: click it.",
            self.proj,
        )
        page.layout().insertLayout(1, choice)
        self.pages.addWidget(page)

        self.score_map = Heatmap("Scores Q·Kᵀ", signed=True)
        self.score_map.set_describer(lambda i, j: explain.score(self.Q, self.K, i, j))
        self.pages.addWidget(
            self._page(
                "Step 3: cell (i, j) is query i dotted with key j; the closer the two point the same "
                "way, the larger it is. Hover a cell for its sum.",
                self.score_map,
            )
        )
        self.scaled_map = Heatmap("Scaled scores", signed=True)
        self.scaled_map.set_describer(lambda i, j: explain.scaled(self.trace, i, j))
        self.scale_note = note("")
        self.pages.addWidget(self._page(self.scale_note, self.scaled_map))
        self.weight_map = Heatmap("Weights softmax(scaled)", signed=False)
        self.weight_map.set_describer(lambda i, j: explain.weight(self.trace, i, j))
        self.sum_note = note("")
        self.pages.addWidget(self._page(self.sum_note, self.weight_map))

        self.blend = ProductView(MatrixView("weights", signed=False), MatrixView("V"), MatrixView("output"))
        self.blend.set_explainer(self._describe_output)
        self.output_note = note("")
        self.pages.addWidget(self._page(self.output_note, self.blend))

        row = QHBoxLayout()
        row.addWidget(left_box)
        row.addWidget(self.pages, 1)
        self.body.addLayout(row)

        self.tokens_edit.textChanged.connect(self._on_tokens)
        self.d_model_spin.valueChanged.connect(lambda v: self._reseed(d_model=v))
        self.d_k_spin.valueChanged.connect(lambda v: self._reseed(d_k=v))
        self.seed_spin.valueChanged.connect(lambda v: self._reseed(seed=v))
        self.reset_button.clicked.connect(self.reset)
        self.x_view.edited.connect(self._on_x_edit)
        self.x_view.invalidEdit.connect(self.show_message)

    @staticmethod
    def _spin(value: int, maximum: int) -> QSpinBox:
        spin = QSpinBox()
        spin.setRange(0, maximum)
        spin.setValue(value)
        return spin

    @staticmethod
    def _page(text: str | QLabel, view: QWidget) -> QWidget:
        page = QWidget()
        layout = QVBoxLayout(page)
        layout.addWidget(text if isinstance(text, QLabel) else note(text))
        layout.addWidget(view, 1)
        return page

    # --- state changes ----------------------------------------------------------------------
    def _on_tokens(self, text: str) -> None:
        try:
            tokens = tokenize(text)
        except ValueError as exc:
            self.show_message(str(exc))
            return
        self.settings = replace(self.settings, text=text)
        self.example = retokenize(self.example, tokens, self.settings.seed)
        self._recompute()

    def _reseed(self, **change) -> None:
        candidate = replace(self.settings, **change)
        try:
            example = random_example(self.example.tokens, candidate.d_model, candidate.d_k, candidate.seed)
        except ValueError as exc:
            self.show_message(str(exc))
            return
        self.settings, self.example = candidate, example
        self._recompute()

    def _on_x_edit(self, i: int, j: int, value: float) -> None:
        table = self.example.table.copy()
        table[vocabulary(self.example.tokens)[1][i], j] = value
        self.example = replace(self.example, table=table)
        self._recompute()

    def _set_projection(self, name: str) -> None:
        self.projection = name
        self.stale.add(1)
        self._refresh(self.step)

    def reset(self) -> None:
        """Back to the seeded example of the first article (the cat sat down, 8 → 4, seed 0)."""
        self.settings = Settings()
        for widget, value in ((self.d_model_spin, 8), (self.d_k_spin, 4), (self.seed_spin, 0)):
            widget.blockSignals(True)
            widget.setValue(value)
            widget.blockSignals(False)
        self.tokens_edit.blockSignals(True)
        self.tokens_edit.setText(self.settings.text)
        self.tokens_edit.blockSignals(False)
        self.example = random_example(tokenize(self.settings.text), 8, 4, 0)
        self._recompute()

    # --- one recompute, then update the existing views ----------------------------------------
    def _recompute(self) -> None:
        """One core computation; only the visible step's view is redrawn now, the others when shown."""
        self.Q, self.K, self.V = self.example.projections()
        self.trace: AttentionTrace = attend(self.Q, self.K, self.V)
        self.clear_message()
        n, d_k = self.Q.shape
        self.diagram.set_shapes(n, n, d_k, d_k)
        self.stale = set(range(len(self.steps)))
        self._refresh(self.step)

    def _refresh(self, step: int) -> None:
        if step in self.stale:
            self.stale.discard(step)
            (
                self._show_embeddings,
                self._show_projection,
                self._show_scores,
                self._show_scaled,
                self._show_weights,
                self._show_blend,
            )[step]()

    def _show_embeddings(self) -> None:
        ex = self.example
        self.x_view.set_data(ex.X, ex.tokens, [str(k) for k in range(ex.table.shape[1])])

    def _show_scores(self) -> None:
        tokens = self.example.tokens
        self.score_map.set_data(self.trace.scores, tokens, tokens)

    def _show_scaled(self) -> None:
        tokens, d_k = self.example.tokens, self.Q.shape[1]
        self.scaled_map.set_data(self.trace.scaled, tokens, tokens)
        self.scale_note.setText(
            f"Step 4: divide by √d_k = √{d_k} = {explain.num(np.sqrt(d_k), 3)}. A sum of d_k products "
            "spreads like √d_k; dividing it out keeps the scores the same size for any d_k."
        )

    def _show_weights(self) -> None:
        tokens, t = self.example.tokens, self.trace
        self.weight_map.set_data(t.weights, tokens, tokens, levels=(0.0, 1.0))
        sums = " ".join(explain.num(v) for v in t.weights.sum(axis=1))
        self.sum_note.setText(
            "Step 5: softmax makes every entry positive and scales each row to a total of 1; cell "
            f"(i, j) is the share of token j's value that token i takes. Row sums: {sums}."
        )

    def _show_blend(self) -> None:
        tokens, t = self.example.tokens, self.trace
        cols = [str(k) for k in range(self.V.shape[1])]
        self.blend.a.set_data(t.weights, tokens, tokens, levels=(0.0, 1.0))
        self.blend.b.set_data(self.V, tokens, cols)
        self.blend.c.set_data(t.output, tokens, cols)
        self.blend.refresh()
        focus = 1 if len(tokens) > 1 else 0
        vector = ", ".join(explain.num(v) for v in t.output[focus])
        self.output_note.setText(
            "Step 6: output row i is Σⱼ weight(i, j) × value j, every value in the share row i gives it. "
            f"New vector for “{tokens[focus]}”: [{vector}]. Click a cell of the output."
        )

    def _show_projection(self) -> None:
        name, ex = self.projection, self.example
        W = {"Q": ex.W_Q, "K": ex.W_K, "V": ex.W_V}[name]
        tokens = ex.tokens
        dims = [str(k) for k in range(W.shape[0])]
        cols = [str(k) for k in range(W.shape[1])]
        self.proj.a.set_data(ex.X, tokens, dims)
        self.proj.b.set_title(f"W_{name}")
        self.proj.b.name = f"W_{name}"
        self.proj.b.set_data(W, dims, cols)
        self.proj.c.set_title(name)
        self.proj.c.name = name
        self.proj.c.set_data(ex.X @ W, tokens, cols)
        self.proj.refresh()

    # --- hover and click explanations -------------------------------------------------------------
    def _describe_x(self, i: int, j: int) -> str:
        tok = self.example.tokens[i]
        return f"dimension {j} of the table row for “{tok}”, shared by every “{tok}” in the text"

    def _describe_projection(self, i: int, j: int) -> str:
        ex, name = self.example, self.projection
        W = {"Q": ex.W_Q, "K": ex.W_K, "V": ex.W_V}[name]
        return explain.projection(ex.X[i], W, j, f"X[{ex.tokens[i]}]", f"W_{name}")

    def _describe_output(self, i: int, k: int) -> str:
        return explain.blend(self.trace, self.V, i, k)

    # --- lecture steps, smoke, export -------------------------------------------------------------
    def show_step(self, i: int) -> None:
        self._refresh(i)
        self.pages.setCurrentIndex(i)
        self.diagram.set_active(DIAGRAM_BOX[i])

    def exercise(self) -> None:
        self.tokens_edit.setText("")
        self.tokens_edit.setText(" ".join(["tok"] * 500))
        self.tokens_edit.setText("the cat saw the dog and the dog saw the cat")
        self.d_k_spin.setValue(0)
        self.d_k_spin.setValue(256)
        self.d_model_spin.setValue(1)
        self.seed_spin.setValue(7)
        self.x_view.model.setData(self.x_view.model.index(0, 0), "nan")
        self.x_view.model.setData(self.x_view.model.index(0, 0), "1.5")
        for name in "KVQ":
            self._set_projection(name)
        self.proj.select(1, 0)
        self.reset()
        super().exercise()
        self.blend.select(1, 0)

    def result_views(self, step: int) -> list[QWidget]:
        """What a class predicts at each step: Q, K or V, then the scores, ... (not the embeddings)."""
        return [[], [self.proj.c], [self.score_map], [self.scaled_map], [self.weight_map], [self.blend.c]][
            step
        ]

    def export(self) -> dict[str, QWidget]:
        return {
            "embeddings": self.x_view,
            "scores": self.score_map,
            "scaled": self.scaled_map,
            "weights": self.weight_map,
            "output": self.blend.c,
        }
