"""Step 4: attention sinks, the weight every head puts on the first token, and the prediction
when that token is dropped."""

from __future__ import annotations

from PySide6.QtWidgets import QFormLayout, QLineEdit, QWidget

from app.panels.inside_decoder import scripts
from app.panels.inside_decoder.state import SinkResult, SinkState, compute_sinks
from app.panels.inside_decoder.views import HeadMap, map_over_pair, show_top
from app.panels.scripts import Script
from app.panels.step import Live, Notice, Step
from app.widgets.text import note
from app.widgets.token_bars import TokenBars
from core.interp.token_text import visible

SINK = 0.5  # a head counts as a sink when it puts more than this on the first token


class SinkPage(Step):
    def __init__(self):
        super().__init__(Live(SinkState(), compute_sinks, background=True))
        self.prompt = self.bind(QLineEdit(self.state.prompt), "prompt")
        self.summary = note()
        controls = QFormLayout()
        self.grid = HeadMap("Mean weight on the first token")
        self.full = TokenBars("Whole prompt")
        self.dropped = TokenBars("First token dropped")
        views = map_over_pair(self.grid, self.full, self.dropped)
        self.layout_with(
            "For every head, the mean weight that the other tokens put on the first one. Below: "
            "the next token with the whole prompt and without its first token.",
            controls,
            views,
            (self.summary,),
            wide=(("Prompt", self.prompt),),
        )

    def views(self) -> dict[str, QWidget]:
        return {"sinks": self.grid}

    def script(self) -> Script:
        return scripts.sinks(self.state)

    def draw(self, r: SinkResult) -> Notice:
        self.grid.set_scores(r.scores, (0.0, 1.0))
        show_top(self.full, r.model, r.dropped.full)
        show_top(self.dropped, r.model, r.dropped.dropped)
        first = visible(r.prompt.pieces[0])
        self.dropped.plot.setTitle(f"Without {first}")
        sinks = int((r.scores > SINK).sum())
        self.summary.setText(
            f"{sinks} of {r.scores.size} heads put more than half their weight on {first}; the "
            f"mean over all heads is {r.scores.mean():.2f}. Dropping it moves "
            f"{r.dropped.total_variation():.0%} of the next token's probability."
        )
        return None
