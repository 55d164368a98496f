"""Step 3: append the drawn token or a clicked one, step by step or automatically; undo."""

from __future__ import annotations

from PySide6.QtCore import Signal
from PySide6.QtWidgets import QHBoxLayout, QListWidget, QPushButton, QVBoxLayout, QWidget

from app.panels.next_token.predictions import token_chips
from app.panels.next_token.view import Snapshot, visible
from app.widgets.controls import note


class GeneratePage(QWidget):
    """Emits ``append_sample()``, ``append_choice(index into the candidates)`` and ``undo()``;
    ``auto_button`` is checkable: while it is down the panel appends one token after another."""

    append_sample = Signal()
    append_choice = Signal(int)
    undo = Signal()

    def __init__(self):
        super().__init__()
        self.sample_button = QPushButton("Append a drawn token")
        self.auto_button = QPushButton("Auto")
        self.auto_button.setCheckable(True)
        self.undo_button = QPushButton("Undo")
        self.candidates = QListWidget()
        self.history = QListWidget()
        self.text = note(rich=True)
        buttons = QHBoxLayout()
        for button in (self.sample_button, self.auto_button, self.undo_button):
            buttons.addWidget(button)
        left = QVBoxLayout()
        left.addWidget(
            note(
                "Each press draws a token with the settings of step 2 and appends it; the model then "
                "predicts the one after. Click a candidate to append it instead. Auto keeps going."
            )
        )
        left.addLayout(buttons)
        left.addWidget(note("Candidates (click one to append it):"))
        left.addWidget(self.candidates, 1)
        right = QVBoxLayout()
        right.addWidget(note("The text so far (appended tokens in orange):"))
        right.addWidget(self.text)
        right.addWidget(note("Chosen tokens and the probability each had:"))
        right.addWidget(self.history, 1)
        row = QHBoxLayout(self)
        row.addLayout(left, 2)
        row.addLayout(right, 3)
        self.sample_button.clicked.connect(self.append_sample)
        self.undo_button.clicked.connect(self.undo)
        self.candidates.itemClicked.connect(lambda item: self.append_choice.emit(self.candidates.row(item)))

    def show(self, snap: Snapshot | None) -> None:
        if snap is None:
            return
        g = snap.generation
        self.candidates.clear()
        for label, c in zip(snap.labels, snap.choices, strict=True):
            self.candidates.addItem(f"{label}   {c.prob:.1%}" + ("" if c.kept else "   (cut)"))
        self.history.clear()
        for step, c in enumerate(g.chosen, 1):
            self.history.addItem(f"{step}. {visible(c.piece)}   {c.prob:.1%}")
        self.history.scrollToBottom()
        self.text.setText(token_chips([*g.prompt.pieces, *(c.piece for c in g.chosen)], len(g.chosen)))
        self.undo_button.setEnabled(bool(g.chosen))
