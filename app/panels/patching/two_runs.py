"""Step 1: the clean and the corrupted prompt, as the tokenizer splits them, the positions where
they differ marked; the target and the foil; both runs' predictions and metrics."""

from __future__ import annotations

from PySide6.QtWidgets import QFormLayout, QWidget

from app.panels.pair_step import PairStep, metrics_html, pair_html
from app.panels.patching import scripts
from app.panels.patching.state import PairResult
from app.panels.patching.sweep import beside, show_top
from app.panels.scripts import Script
from app.panels.step import Live, Notice
from app.widgets.text import note
from app.widgets.token_bars import TokenBars


class TwoRunsPage(PairStep):
    def __init__(self, live: Live):
        super().__init__(live)
        self.tokens = note(rich=True)
        self.metrics = note(rich=True)
        controls = QFormLayout()
        self.add_pair_rows(controls)
        self.clean_bars = TokenBars("Clean run")
        self.corrupt_bars = TokenBars("Corrupted run")
        self.layout_with(
            "Two prompts with the same number of tokens: the clean one, and a corrupted one with a "
            "word changed. The metric is logit(target) − logit(foil) at the last position; every "
            "later step shows it normalised: 0 = the corrupted run, 1 = the clean run.",
            controls,
            beside(self.clean_bars, self.corrupt_bars),
            (self.tokens, self.metrics),
            wide=self.pair_wide,
        )

    def views(self) -> dict[str, QWidget]:
        return {"clean": self.clean_bars.plot, "corrupted": self.corrupt_bars.plot}

    def script(self) -> Script:
        return scripts.two_runs(self.state)

    def draw(self, r: PairResult) -> Notice:
        p = r.pair
        self.tokens.setText(pair_html(p))
        self.metrics.setText(metrics_html(p, r.clean, r.corrupt))
        show_top(self.clean_bars, r.clean_top)
        show_top(self.corrupt_bars, r.corrupt_top)
        return None
