"""Step 1: tokens and their embeddings, one table row per distinct token; cells are editable."""

from __future__ import annotations

from PySide6.QtWidgets import QWidget

from app.panels.qkv import scripts
from app.panels.qkv.state import QKVResult, edit_embedding
from app.panels.scripts import Script
from app.panels.step import Live, Notice, Step
from app.widgets import MatrixView


class EmbeddingsPage(Step):
    def __init__(self, live: Live):
        super().__init__(live)
        self.x_view = MatrixView("X (embeddings)", editable=True)
        self.x_view.set_describer(self._describe_x)
        self.x_view.edited.connect(self._on_edit)
        self.x_view.invalidEdit.connect(self.tell)
        self.layout_with(
            "One table row per token, picked by the token alone: a word typed twice gets the same "
            "row twice, whatever surrounds it. Double-click a number to edit it; every copy of "
            "that token follows.",
            None,
            self.x_view,
        )

    def result_views(self) -> list[QWidget]:
        return []  # the embeddings are given, not predicted: the class guesses from step 2 on

    def views(self) -> dict[str, QWidget]:
        return {"embeddings": self.x_view}

    def script(self) -> Script:
        return scripts.embeddings(self.state)

    def draw(self, r: QKVResult) -> Notice:
        ex = r.example
        self.x_view.set_data(ex.X, ex.tokens, [str(k) for k in range(ex.table.shape[1])])
        return None

    def _on_edit(self, i: int, j: int, value: float) -> None:
        self.apply(example=edit_embedding(self.result.example, i, j, value))

    def _describe_x(self, i: int, j: int) -> str:
        tok = self.result.example.tokens[i]
        return f"dimension {j} of the table row for “{tok}”, shared by every “{tok}” in the text"
