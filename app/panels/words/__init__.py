"""Panel "Which words mattered": one answer of a decoder explained by five methods side by side
(attention, rollout, gradient × input, integrated gradients, occlusion) and how well they agree;
then the same methods for two sentences' similarity in the bundled encoder.
One state for every step, computed in the worker; the prompt and the answer sit above the steps."""

from __future__ import annotations

from PySide6.QtWidgets import QHBoxLayout, QLabel, QLineEdit

from app.panels.binding import bind
from app.panels.model_row import ModelRow
from app.panels.row_panel import RowPanel
from app.panels.step import Live
from app.panels.words.agreement import AgreementPage
from app.panels.words.attention import AttentionPage
from app.panels.words.encoder import EncoderPage
from app.panels.words.gradients import GradientsPage
from app.panels.words.occlusion import OcclusionPage
from app.panels.words.state import WordsState, compute_words
from app.widgets.sizing import WholeText
from app.widgets.text import TextBox
from core.models import DECODER, smollm2


class WordsPanel(RowPanel):
    steps = ("What attention shows", "Gradients", "Take a word away", "Do they agree?", "The encoder")

    def __init__(self, parent=None):
        super().__init__(parent)
        self.live = Live(WordsState(), compute_words, background=True)
        s = self.live.state
        self.prompt = bind(TextBox(s.prompt), self.live, "prompt")
        self.target = bind(QLineEdit(s.target), self.live, "target")
        self.foil = bind(QLineEdit(s.foil), self.live, "foil")
        self.target.setPlaceholderText("the top next token")
        self.foil.setPlaceholderText("none: log p")
        for field in (self.target, self.foil):
            WholeText(field)
        self.progress, self.cancel = self.runs_of(self.live)
        self.row = ModelRow(DECODER, "words", default=smollm2.KEY, fallback=smollm2.KEY)
        prompt_row = QHBoxLayout()  # the prompt across the page: it wraps, it is read whole
        prompt_row.addWidget(QLabel("Prompt"))
        prompt_row.addWidget(self.prompt, 1)
        answer = QHBoxLayout()
        for widget in (QLabel("Target"), self.target, QLabel("Foil"), self.foil, self.progress, self.cancel):
            answer.addWidget(widget)
        self.body.addWidget(self.row)
        self.body.addLayout(prompt_row)
        self.body.addLayout(answer)
        self.attention = AttentionPage(self.live)
        self.gradients = GradientsPage(self.live)
        self.occlusion = OcclusionPage(self.live)
        self.agreement = AgreementPage(self.live)
        self.encoder = EncoderPage()
        self.add_steps(self.attention, self.gradients, self.occlusion, self.agreement, self.encoder)
        self.stepChanged.connect(lambda _: self.encoder.is_current() and self.encoder.start())
        self.follow_row(self.live)
        self.set_step(0)

    def exercise(self) -> None:
        from app import worker

        bad = ({"layer": 99}, {"target": "Mary", "foil": "Mary"}, {"steps": 0}, {"removed": 2},
               {"baseline": " the", "steps": 8}, {"x": "ig", "y": "rollout"})  # fmt: skip
        self.try_changes(
            self.live, *bad, back=("layer", "target", "foil", "steps", "removed", "baseline", "x", "y")
        )
        super().exercise()
        worker.settle()
