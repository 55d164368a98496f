"""Step 6: the second article's experiment. Paging here changes nothing; a button loads the
article's settings, and then the seed and β on the left explore around it."""

from __future__ import annotations

from dataclasses import asdict

from PySide6.QtWidgets import QPushButton, QWidget

from app.panels.memory import scripts
from app.panels.memory.retrieve import RetrieveView
from app.panels.memory.state import ARTICLE, ARTICLE_NOTE, MemoryResult
from app.panels.scripts import Script
from app.panels.step import Live, Notice, Step


class ArticlePage(Step):
    def __init__(self, live: Live):
        super().__init__(live)
        self.load_button = QPushButton("Load the article's experiment")
        self.load_button.setToolTip(ARTICLE_NOTE)
        self.load_button.clicked.connect(self.load)
        self.view = RetrieveView()
        self.layout_with(None, self.load_button, self.view, on_top=True, flush=True)

    def views(self) -> dict[str, QWidget]:
        return {"article_weights": self.view.modern_bars.plot}

    def load(self) -> None:
        """Copy the second article's experiment (seed 0, β = 1, its draws) into the settings."""
        self.apply(**asdict(ARTICLE))

    def script(self) -> Script:
        return scripts.retrieval(self.state)

    def draw(self, r: MemoryResult) -> Notice:
        self.view.show_result(r)
        self.load_button.setEnabled(r.state != ARTICLE)
        return None
