"""Step 1: the prompt as the tokenizer splits it, and the model's next-token probabilities."""

from __future__ import annotations

import math
from html import escape

from PySide6.QtWidgets import QFormLayout, QHBoxLayout, QSpinBox, QVBoxLayout, QWidget

from app.panels.next_token.view import Snapshot, visible
from app.widgets.controls import note
from app.widgets.token_bars import TokenBars
from core import sampling

DEFAULT_TOP = 10


def token_chips(pieces, chosen: int = 0) -> str:
    """HTML: each piece in its own box; the last ``chosen`` ones (appended by generation) in orange."""
    cells = []
    for i, piece in enumerate(pieces):
        colour = "#ffe2bf" if i >= len(pieces) - chosen else "#dde8fa"
        cells.append(
            f'<span style="background:{colour}; color:#222">&nbsp;{escape(visible(piece))}&nbsp;</span>'
        )
    return " ".join(cells)


class PredictionsPage(QWidget):
    def __init__(self):
        super().__init__()
        self.top_spin = QSpinBox()
        self.top_spin.setRange(1, 30)
        self.top_spin.setValue(DEFAULT_TOP)
        self.tokens = note(rich=True)
        self.summary = note()
        self.bars = TokenBars("Next token: probabilities (temperature 1)")
        form = QFormLayout()
        form.addRow("Tokens listed", self.top_spin)
        left = QVBoxLayout()
        left.addWidget(note("The prompt as the model reads it (␣ marks a space inside a token):"))
        left.addWidget(self.tokens)
        left.addLayout(form)
        left.addWidget(self.summary)
        left.addStretch(1)
        holder = QWidget()
        holder.setLayout(left)
        holder.setMaximumWidth(360)
        row = QHBoxLayout(self)
        row.addWidget(holder)
        row.addWidget(self.bars, 1)
        self.snapshot: Snapshot | None = None
        self.top_spin.valueChanged.connect(lambda _: self.show(self.snapshot))

    def show(self, snap: Snapshot | None) -> None:
        self.snapshot = snap
        if snap is None:
            return
        g = snap.generation
        self.tokens.setText(token_chips([*g.prompt.pieces, *(c.piece for c in g.chosen)], len(g.chosen)))
        plain = sampling.reshape(g.logits)
        choices, rest = sampling.top(plain, self.top_spin.value())
        labels = [visible(snap.model.tokenizer.decode([c.id])) for c in choices]
        self.bars.set_bars(labels, [c.prob for c in choices], [True] * len(choices), rest)
        dropped = f" The start of the prompt was cut: {g.prompt.dropped} tokens." if g.prompt.dropped else ""
        self.summary.setText(
            f"{g.length} tokens in, one distribution out over {plain.probs.size:,} tokens. "
            f"Most likely next: {labels[0]} ({choices[0].prob:.1%}). Entropy {plain.entropy:.2f} nats "
            f"(0 = certain, {math.log(plain.probs.size):.1f} = uniform).{dropped}"
        )
