"""Step 1: what attention shows: the last token's weights in one layer (a head, or their mean), and
attention rollout through every layer, with and without the first token."""

from __future__ import annotations

from PySide6.QtWidgets import QFormLayout, QWidget

from app.panels.scripts import Script
from app.panels.step import Live, Notice, Step
from app.panels.words import scripts
from app.panels.words.state import WordsResult
from app.panels.words.views import show, strip, told
from app.widgets.spin_boxes import spin
from app.widgets.text import note

MOST = 10_000  # layers or heads: the model refuses what it does not have, with a message


class AttentionPage(Step):
    def __init__(self, live: Live):
        super().__init__(live)
        self.layer = self.bind(spin(self.state.layer, 0, MOST), "layer")
        self.layer.setSpecialValueText("last")
        self.head = self.bind(spin(self.state.head, 0, MOST), "head")
        self.head.setSpecialValueText("mean")
        self.strips = strip("Where the last token looks")
        self.summary = note(rich=True)
        controls = QFormLayout()
        controls.addRow("Layer", self.layer)
        controls.addRow("Head", self.head)
        self.layout_with(
            "The last token's attention weights say where one layer read from, not what changed "
            "the answer. Rollout follows the weights through every layer, counting the stream's "
            "own path as half of each step.",
            controls,
            self.strips,
            (self.summary,),
        )

    def views(self) -> dict[str, QWidget]:
        return {"attention": self.strips}

    def script(self) -> Script:
        return scripts.attention(self.state)

    def draw(self, r: WordsResult) -> Notice:
        head = "" if self.state.head == 0 else f" H{self.state.head}"
        rows = {
            f"attention L{r.layer + 1}{head}": r.methods["attention"],
            "rollout": r.methods["rollout"],
            "rollout, no first": r.rollout_rest,
        }
        show(self.strips, rows, r.labels)
        best = int(r.rollout_rest.argmax())
        self.summary.setText(
            f"Rollout puts {r.methods['rollout'][0]:.3f} on the first token, the attention sink, so "
            f"it says nothing about the others. Left out, its largest share goes to token {best + 1}, "
            f"{r.labels[best]} ({r.rollout_rest[best]:.3f})."
        )
        return told(r.notices)
