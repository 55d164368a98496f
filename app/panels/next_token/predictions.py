"""Step 1: the prompt as the tokenizer splits it, and the model's next-token probabilities."""

from __future__ import annotations

import math
from html import escape

from PySide6.QtWidgets import QFormLayout, QWidget

from app.panels.binding import bind
from app.panels.next_token import scripts
from app.panels.next_token.state import context_notice, snapshot
from app.panels.next_token.writing import Writing
from app.panels.scripts import Script
from app.panels.step import Notice, Step
from app.widgets.spin_boxes import spin
from app.widgets.text import note
from app.widgets.token_bars import TokenBars
from core.interp.token_text import visible
from core.maths import sampling

MAX_LISTED = 30


def token_chips(pieces, chosen: int = 0) -> str:
    """HTML: each piece in its own box; the last ``chosen`` ones (appended by generation) in orange."""
    cells = []
    for i, piece in enumerate(pieces):
        colour = "#ffe2bf" if i >= len(pieces) - chosen else "#dde8fa"
        cells.append(
            f'<span style="background:{colour}; color:#222">&nbsp;{escape(visible(piece))}&nbsp;</span>'
        )
    return " ".join(cells)


def text_so_far(generation) -> str:
    return token_chips(
        [*generation.prompt.pieces, *(c.piece for c in generation.chosen)], len(generation.chosen)
    )


class PredictionsPage(Step):
    def __init__(self, writing: Writing):
        super().__init__(writing.text)
        self.settings = settings = self.follow(writing.sampling)
        self.listed_spin = bind(spin(settings.state.listed, 1, MAX_LISTED), settings, "listed")
        self.tokens = note(rich=True)
        self.summary = note()
        self.bars = TokenBars("Next token: the model's probabilities (temperature 1)")
        controls = QFormLayout()
        controls.addRow("Tokens listed", self.listed_spin)
        self.layout_with(
            "The prompt as the model reads it, one box per token (␣ marks a space inside a token; "
            "tokens appended in step 3 are orange), and the probability of each possible next token.",
            controls,
            self.bars,
            (self.tokens, self.summary),
        )

    def views(self) -> dict[str, QWidget]:
        return {"predictions": self.bars.plot}

    def script(self) -> Script:
        return scripts.predictions(self.state.run, self.result, self.settings.state)

    def draw(self, generation) -> Notice:
        snap = snapshot(generation, self.settings.result)
        plain = snap.plain
        choices, rest = sampling.top(plain, self.settings.result.listed)
        labels = [visible(generation.model.tokenizer.decode([c.id])) for c in choices]
        self.bars.set_bars(labels, [c.prob for c in choices], [True] * len(choices), rest)
        self.tokens.setText(text_so_far(generation))
        self.summary.setText(
            f"{generation.length} tokens in, one distribution out over {plain.probs.size:,} tokens. "
            f"Most likely next: {labels[0]} ({choices[0].prob:.1%}). Entropy {plain.entropy:.2f} nats "
            f"(0 = certain, {math.log(plain.probs.size):.1f} = uniform)."
        )
        return context_notice(generation)
