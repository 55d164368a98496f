"""Step 3: take a word away: how much the answer drops when one token's input is set to zero,
and the prediction without the token chosen (click a cell)."""

from __future__ import annotations

from PySide6.QtWidgets import QFormLayout, QWidget

from app.panels.scripts import Script
from app.panels.step import Live, Notice, Step
from app.panels.words import scripts
from app.panels.words.state import WordsResult
from app.panels.words.views import show, strip, told
from app.widgets.reflow_grid import side_by_side
from app.widgets.spin_boxes import spin
from app.widgets.tables import fill_table, text_table
from app.widgets.text import note


class OcclusionPage(Step):
    def __init__(self, live: Live):
        super().__init__(live)
        self.removed = self.bind(spin(self.state.removed, 0, 10_000), "removed")
        self.removed.setSpecialValueText("none")
        self.strips = strip("The answer's drop without each token (click one)", signed=True)
        self.strips.clicked.connect(lambda _i, j: self.apply(removed=j + 1))
        self.table = text_table(["next token", "p", "without it"], row_labels=False)
        self.summary = note(rich=True)
        controls = QFormLayout()
        controls.addRow("Take away token", self.removed)
        self.layout_with(
            "The plainest test: run the model again with one token's input set to zero and see how "
            "much the answer drops. One run per token; no gradient, no attention weight, only the "
            "model's own output.",
            controls,
            side_by_side(self.strips, self.table),
            (self.summary,),
        )

    def views(self) -> dict[str, QWidget]:
        return {"occlusion": self.strips}

    def script(self) -> Script:
        return scripts.occlusion(self.state)

    def draw(self, r: WordsResult) -> Notice:
        show(self.strips, {"occlusion": r.methods["occlusion"]}, r.labels, signed=True)
        k = r.removed
        self.strips.mark(0, k - 1) if k else self.strips.mark(None)
        without = r.without or ("",) * len(r.with_token)
        fill_table(
            self.table,
            [
                [t, f"{p:.4f}", f"{q:.4f}" if q != "" else ""]
                for (t, p), q in zip(r.with_token, without, strict=True)
            ],
        )
        best = int(r.methods["occlusion"].argmax())
        gone = (
            f" Without token {k}, {r.labels[k - 1]}, the next tokens change as the table shows." if k else ""
        )
        self.summary.setText(
            f"{r.answer_text} = {r.metric:.4f}. Taking away token {best + 1}, {r.labels[best]}, lowers "
            f"it the most: by {r.methods['occlusion'][best]:.4f}.{gone}"
        )
        return told(r.notices)
