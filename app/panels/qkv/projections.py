"""Step 2: the projections Q = X·W_Q, K = X·W_K, V = X·W_V; click a cell for its sum."""

from __future__ import annotations

from PySide6.QtWidgets import QButtonGroup, QFormLayout, QHBoxLayout, QRadioButton, QWidget

from app.panels.qkv import scripts
from app.panels.qkv.state import QKVResult
from app.panels.scripts import Script
from app.panels.step import Live, Notice, Step
from app.widgets import MatrixView
from app.widgets.product_view import ProductView
from core.maths import explain


class ProjectionPage(Step):
    def __init__(self, live: Live):
        super().__init__(live)
        self.projection = "Q"  # which of the three is shown: a view choice, not state
        self.proj = ProductView(MatrixView("X"), MatrixView("W_Q"), MatrixView("Q"))
        self.proj.set_explainer(self._describe)
        self.proj_buttons = QButtonGroup(self)
        buttons = QHBoxLayout()
        for name in "QKV":
            button = QRadioButton(f"{name} = X·W_{name}")
            button.setChecked(name == "Q")
            button.setProperty("projection", name)
            self.proj_buttons.addButton(button)
            buttons.addWidget(button)
        buttons.addStretch(1)
        choice = QFormLayout()  # the buttons go under their label where the page is narrow
        choice.setRowWrapPolicy(QFormLayout.RowWrapPolicy.WrapLongRows)
        choice.addRow("Projection:", buttons)
        self.proj_buttons.buttonClicked.connect(lambda b: self.set_projection(b.property("projection")))
        self.layout_with(
            "W_Q, W_K and W_V turn the same embedding into three vectors: a query to search with, "
            "a key to be compared with, a value to hand over. Every number of the result is one "
            "row-times-column sum: click it.",
            choice,
            self.proj,
            on_top=True,
        )

    def views(self) -> dict[str, QWidget]:
        return {"projection input": self.proj.a, "projection weights": self.proj.b, "projection": self.proj.c}

    def set_projection(self, name: str) -> None:
        self.projection = name
        self.mark_stale()

    def _weights(self, r: QKVResult):
        ex = r.example
        return {"Q": ex.W_Q, "K": ex.W_K, "V": ex.W_V}[self.projection]

    def script(self) -> Script:
        return scripts.projections(self.state, self.projection)

    def draw(self, r: QKVResult) -> Notice:
        name, ex, W = self.projection, r.example, self._weights(r)
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
        return None

    def _describe(self, i: int, j: int) -> str:
        ex = self.result.example
        return explain.projection(
            ex.X[i], self._weights(self.result), j, f"X[{ex.tokens[i]}]", f"W_{self.projection}"
        )
