"""Step 2: gradients: gradient × input, and integrated gradients with its completeness gap. Red
pushes the answer up, blue pushes it down."""

from __future__ import annotations

from PySide6.QtWidgets import QFormLayout, QLineEdit, QWidget

from app.panels.scripts import Script
from app.panels.step import Live, Notice, Step
from app.panels.words import scripts
from app.panels.words.state import WordsResult
from app.panels.words.views import show, strip, told
from app.widgets.spin_boxes import spin
from app.widgets.text import note


class GradientsPage(Step):
    def __init__(self, live: Live):
        super().__init__(live)
        self.steps = self.bind(spin(self.state.steps, 0, 100_000), "steps")
        self.baseline = self.bind(QLineEdit(self.state.baseline), "baseline")
        self.baseline.setPlaceholderText("zero")
        self.strips = strip("Each token's input: how much it moves the answer", signed=True)
        self.summary = note(rich=True)
        controls = QFormLayout()
        controls.addRow("Steps", self.steps)
        controls.addRow("From", self.baseline)
        self.layout_with(
            "Gradient × input asks how the answer would move if each token's input grew a little. "
            "Integrated gradients adds those gradients up along the path from a baseline input to "
            "the real one, so the scores should add up to the answer's change.",
            controls,
            self.strips,
            (self.summary,),
        )

    def views(self) -> dict[str, QWidget]:
        return {"gradients": self.strips}

    def script(self) -> Script:
        return scripts.gradients(self.state)

    def draw(self, r: WordsResult) -> Notice:
        rows = {"gradient × input": r.methods["gradxinput"], "integrated gradients": r.methods["ig"]}
        show(self.strips, rows, r.labels, signed=True)
        ig = r.ig
        start = "a zero input" if not self.state.baseline.strip() else f"{self.state.baseline!r} everywhere"
        self.summary.setText(
            f"{r.answer_text} = {r.metric:.4f}; from {start} it is {ig.baseline_metric:.4f}. The "
            f"{ig.steps} steps' scores add up to {ig.scores.sum():.4f}: a completeness gap of "
            f"<b>{ig.gap:.4f}</b>. More steps close it where the path is smooth; a model that "
            "normalises its input hardly sees the path's length, so most of the change happens "
            "near the zero end."
        )
        return told(r.notices)
