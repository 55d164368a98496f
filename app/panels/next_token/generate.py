"""Step 3: append the drawn token or a clicked one, step by step or automatically; undo."""

from __future__ import annotations

from PySide6.QtWidgets import QHBoxLayout, QListWidget, QPushButton, QVBoxLayout

from app.panels.binding import bind
from app.panels.next_token import scripts
from app.panels.next_token.predictions import text_so_far
from app.panels.next_token.state import context_notice, ended, snapshot
from app.panels.next_token.writing import Writing
from app.panels.scripts import Script
from app.panels.step import Notice, Step
from app.widgets.text import note
from core.interp.token_text import visible


class GeneratePage(Step):
    def __init__(self, writing: Writing):
        super().__init__(writing.text)
        self.settings = self.follow(writing.sampling)
        self.sample_button = QPushButton("Append a drawn token")
        self.auto_button = QPushButton("Auto")
        self.auto_button.setCheckable(True)
        bind(self.auto_button, writing.auto, "on")
        self.undo_button = QPushButton("Undo")
        self.candidates = QListWidget()
        self.history = QListWidget()
        self.text = note(rich=True)
        buttons = QHBoxLayout()
        for button in (self.sample_button, self.auto_button, self.undo_button):
            buttons.addWidget(button)
        buttons.addStretch(1)
        left = QVBoxLayout()
        left.addWidget(note("Candidates (click one to append it):"))
        left.addWidget(self.candidates, 1)
        right = QVBoxLayout()
        right.addWidget(note("The text so far (appended tokens in orange):"))
        right.addWidget(self.text)
        right.addWidget(note("Chosen tokens and the probability each had:"))
        right.addWidget(self.history, 1)
        row = QHBoxLayout()
        row.addLayout(left, 2)
        row.addLayout(right, 3)
        self.layout_with(
            "Each press draws a token with the settings of step 2 and appends it; the model then "
            "predicts the one after, reusing its KV cache. Click a candidate to append it instead. "
            "Auto keeps going.",
            buttons,
            row,
            on_top=True,
        )
        self.sample_button.clicked.connect(writing.append_sample)
        self.undo_button.clicked.connect(writing.undo)
        self.candidates.itemClicked.connect(lambda item: writing.append_choice(self.candidates.row(item)))

    def script(self) -> Script:
        return scripts.generate(self.state.run, self.result, self.settings.state)

    def draw(self, generation) -> Notice:
        snap = snapshot(generation, self.settings.result)
        self.candidates.clear()
        for label, c in zip(snap.labels, snap.choices, strict=True):
            self.candidates.addItem(f"{label}   {c.prob:.1%}" + ("" if c.kept else "   (cut)"))
        self.history.clear()
        for step, c in enumerate(generation.chosen, 1):
            self.history.addItem(f"{step}. {visible(c.piece)}   {c.prob:.1%}")
        self.history.scrollToBottom()
        self.text.setText(text_so_far(generation))
        self.undo_button.setEnabled(bool(generation.chosen))
        why = ended(generation)
        return (why, "info") if why else context_notice(generation)
