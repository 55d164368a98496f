"""Panel "Inside a decoder": knock heads out of SmolLM2 and watch the prediction change; rank
heads by effect and by attention; the logit lens; attention sinks; induction heads; and the same
measures on a second decoder, side by side."""

from __future__ import annotations

from app.panels.inside_decoder.compare import ComparePage
from app.panels.inside_decoder.induction import InductionPage
from app.panels.inside_decoder.knock_out import KnockPage
from app.panels.inside_decoder.lens import LensPage
from app.panels.inside_decoder.sinks import SinkPage
from app.panels.inside_decoder.state import KnockState, compute_knock
from app.panels.inside_decoder.which_heads import RankPage
from app.panels.model_row import ModelRow
from app.panels.row_panel import RowPanel
from app.panels.step import Live
from core.models import DECODER, smollm2


class InsideDecoderPanel(RowPanel):
    steps = (
        "Knock out heads", "Which heads matter", "Logit lens", "Attention sinks", "Induction heads",
        "Compare two models",
    )  # fmt: skip

    def __init__(self, parent=None):
        super().__init__(parent)
        knock = Live(KnockState(), compute_knock, background=True)  # steps 1 and 2 share it
        self.knock = KnockPage(knock)
        self.rank = RankPage(knock)
        self.lens = LensPage()
        self.sinks = SinkPage()
        self.induction = InductionPage()
        self.compare = ComparePage()
        self.row = ModelRow(DECODER, "inside_decoder", default=smollm2.KEY, fallback=smollm2.KEY)
        self.body.addWidget(self.row)
        self.add_steps(self.knock, self.rank, self.lens, self.sinks, self.induction, self.compare)
        self.stepChanged.connect(lambda _: self._compare())
        self.row.loaded.connect(self._run_on)
        self.row.said.connect(self.show_message)
        self.rank.inside_button.clicked.connect(
            lambda: (cell := self.rank.top_head()) and self.openHead.emit(cell)
        )
        for live in self.lives():
            live.failed.connect(self.offer_missing)  # after the message bar's slot
        self.set_step(0)

    def lives(self) -> list[Live]:
        return [self.knock.live, self.lens.live, self.sinks.live, self.induction.live, self.compare.live]

    def _run_on(self, model) -> None:
        for live in self.lives()[:-1]:
            live.apply(source=model.source)
        self._compare()

    def _compare(self) -> None:
        """Step 6, while on screen, compares the panel's model on the other steps' prompts (a
        second model loads only once it is asked for)."""
        if self.compare.is_current() and self.row.model is not None:
            states = self.knock.state, self.sinks.state, self.induction.state
            self.compare.sync(self.row.model.source, self.row.recent(), *states)

    def exercise(self) -> None:
        from app import worker

        k = self.knock
        for heads in (((0, 0),), ((0, 0), (29, 8)), ((99, 0),), ()):
            k.apply(heads=heads)
            worker.settle()
        k.mode.setCurrentIndex(1)
        k.layer_button.click()
        worker.settle()
        self.rank.target.setText("John")
        self.rank.target.setText("Mary")
        self.rank.foil.setText("")
        self.rank.foil.setText("John")
        self.lens.prompt.setText("")
        self.lens.prompt.setText(self.lens.state.prompt or "The capital of France is")
        self.induction.n.setValue(1)
        self.induction.n.setValue(20)
        super().exercise()
        worker.settle()
