"""Step 4: knock a head out of the trained model, and type a repeated sequence to watch it copied."""

from __future__ import annotations

import numpy as np
from PySide6.QtWidgets import QFormLayout, QGridLayout, QWidget

from app.panels.induction import scripts
from app.panels.induction.state import KnockoutResult, KnockoutState, compute_knockout
from app.panels.scripts import Script
from app.panels.step import Live, Notice, Step
from app.panels.training import phase
from app.widgets import Heatmap
from app.widgets.spin_boxes import spin
from app.widgets.tables import fill_table, text_table
from app.widgets.text import TextBox, note

UNTRAINED = "Nothing to measure yet: train the model in step 2 first (or pause it there)."


class KnockoutPage(Step):
    def __init__(self, training: Live):
        super().__init__(Live(KnockoutState(), compute_knockout, background=True))
        self.training = training
        s = self.state
        self.layer_spin = self.bind(spin(s.layer, 0, 9), "layer")
        self.head_spin = self.bind(spin(s.head, 0, 99), "head")
        self.text_edit = self.bind(TextBox(s.text), "text")
        controls = QFormLayout()
        controls.addRow("Knock out layer", self.layer_spin)
        controls.addRow("… head", self.head_spin)
        self.summary = note()
        self.losses = Heatmap("Repeat loss without each head (click one)", colorbar=False, cell_text=True)
        self.weights = Heatmap("The chosen head reading your sequence", colorbar=False, max_ticks=16)
        self.table = text_table(("token", "next", "without it"), size_columns=True)
        self.untrained = note(UNTRAINED)  # in place of the views until a model is trained
        views = QGridLayout()
        views.addWidget(self.untrained, 0, 0, 1, 2)
        views.addWidget(self.losses, 0, 0)
        views.addWidget(self.table, 0, 1, 2, 1)
        views.addWidget(self.weights, 1, 0)
        views.setColumnStretch(0, 3)
        views.setColumnStretch(1, 2)
        self.layout_with(
            "Remove one head from the model trained in step 2 (its output set to zero) and see what "
            "the repeat costs. Type token numbers with a repeat in them (a block of 16 to 32, as in "
            "training): the induction head looks one place after the earlier copy, and the model "
            "predicts the token it finds there.",
            controls,
            views,
            (self.summary,),
            wide=(("Your sequence", self.text_edit),),
        )
        self.losses.clicked.connect(lambda i, j: self.apply(layer=i + 1, head=j + 1))
        training.busy.connect(lambda _running: self.take_model())
        self.live.changed.connect(self.show_untrained)
        self.show_untrained()

    def views(self) -> dict[str, QWidget]:
        return {"knockouts": self.losses, "typed": self.weights}

    def show_untrained(self) -> None:
        """Before a model is trained (and after a reset) say so in place of the empty views."""
        untrained = self.live.result is None
        self.untrained.setVisible(untrained)
        for view in (self.losses, self.weights, self.table, self.summary):
            view.setVisible(not untrained)

    def take_model(self) -> None:
        """Measure the step-2 model whenever it stands still (paused or trained to its last step);
        forget it when training is reset."""
        r, now = self.training.result, phase(self.training)
        if now in ("paused", "done") and r.step > 0:
            wanted = self.live.wanted  # what was last asked for, landed or still measuring
            if (r.run, r.step) != (wanted.run, wanted.step):
                self.apply(run=r.run, step=r.step)
        elif now == "empty" and self.live.wanted.run is not None:
            self.apply(run=None, step=0)  # a reset: also supersedes a measurement still running

    def script(self) -> Script:
        return scripts.knockout(self.state)

    def draw(self, r: KnockoutResult) -> Notice:
        s = self.state
        layers, heads = r.losses.shape
        self.losses.set_data(
            r.losses, [f"layer {i + 1}" for i in range(layers)], [f"head {j + 1}" for j in range(heads)]
        )
        self.losses.mark(s.layer - 1, s.head - 1)
        labels = [str(t) for t in r.reading.tokens]
        self.weights.set_data(r.reading.weights[s.layer - 1, s.head - 1], labels, labels, levels=(0.0, 1.0))
        tokens = r.reading.tokens
        rows = []
        for i, token in enumerate(tokens):
            actual = tokens[i + 1] if i + 1 < len(tokens) else None
            rows.append([str(token), mark(r.reading, i, actual), mark(r.knocked, i, actual)])
        fill_table(self.table, rows)
        copied = sum(r.reading.predicted[i] == tokens[i + 1] for i in range(len(tokens) - 1))
        knocked = sum(r.knocked.predicted[i] == tokens[i + 1] for i in range(len(tokens) - 1))
        loss = r.losses[s.layer - 1, s.head - 1]
        self.summary.setText(
            f"Repeat loss: {r.intact:.2f} nats with every head, {loss:.2f} without layer {s.layer}, "
            f"head {s.head}.\nYour sequence: {copied} of {len(tokens) - 1} next tokens right with every "
            f"head, {knocked} without it."
        )
        worst = np.unravel_index(r.losses.argmax(), r.losses.shape)
        return (
            f"The model trained to step {s.step:,}. Knocking out layer {worst[0] + 1}, head {worst[1] + 1} "
            f"hurts most: {r.losses[worst]:.2f} against {r.intact:.2f} nats.",
            "info",
        )


def mark(reading, i: int, actual: int | None) -> str:
    """'17 (0.93) ✓': the predicted next token at position i, its probability, and whether it is right."""
    text = f"{reading.predicted[i]} ({reading.confidence[i]:.2f})"
    if actual is None:
        return text
    return text + (" ✓" if reading.predicted[i] == actual else " ✗")
