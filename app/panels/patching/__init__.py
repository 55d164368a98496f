"""Panel "Patching": which activations carry a decoder's answer. A clean and a corrupted prompt;
activations copied from one run into the other, the residual stream, attention and MLP outputs
and every head; and the one-pass approximation (attribution patching)."""

from __future__ import annotations

from app.panels.model_row import ModelRow
from app.panels.patching.approx import ApproxPage
from app.panels.patching.heads import HeadsPage
from app.panels.patching.parts import PartsPage
from app.panels.patching.state import VIEWS, PairState, compute_pair
from app.panels.patching.stream import StreamPage
from app.panels.patching.two_runs import TwoRunsPage
from app.panels.row_panel import RowPanel
from app.panels.step import Live
from core.interp.patching import PAIRS
from core.models import DECODER, smollm2


class PatchingPanel(RowPanel):
    steps = ("Two runs", "The residual stream", "Attention vs MLP", "Heads", "The fast approximation")

    def __init__(self, parent=None):
        super().__init__(parent)
        live = Live(PairState(), compute_pair, background=True)  # every step shares the pair
        self.runs = TwoRunsPage(live)
        self.stream = StreamPage(live)
        self.parts = PartsPage(live)
        self.heads = HeadsPage(live, self.openHead.emit)
        self.approx = ApproxPage(live)
        self.row = ModelRow(DECODER, "patching", default=smollm2.KEY, fallback=smollm2.KEY)
        self.body.addWidget(self.row)
        self.add_steps(self.runs, self.stream, self.parts, self.heads, self.approx)
        self.row.loaded.connect(lambda model: self.runs.apply(source=model.source))
        self.row.said.connect(self.show_message)
        live.failed.connect(self.offer_missing)
        self.set_step(0)

    def show_step(self, i: int) -> None:
        """Show step ``i``; the state's sweep turns to its grids (another step's sweep stops and
        starts again when that step is shown)."""
        super().show_step(i)
        if self.runs.live.wanted.view != VIEWS[i]:
            self.runs.apply(view=VIEWS[i])

    def exercise(self) -> None:
        from app import worker

        r = self.runs
        r.corrupt.setText("When Mary and John went to the store, Maryanne gave a drink to")
        worker.settle()
        r.foil.setText(r.target.text())
        worker.settle()
        for name in list(PAIRS)[::-1]:
            r.preset.setCurrentText(name)
            r.use_preset(r.preset.currentIndex())
            worker.settle()
        r.direction.setCurrentIndex(1)
        worker.settle()
        r.direction.setCurrentIndex(0)
        worker.settle()
        for i in range(len(self.steps)):
            self.set_step(i)
            worker.settle()
        self.set_step(1)
        worker.settle()
        r = self.runs.result
        if r is not None and "resid" in r.grids:  # the changed name's stream, halfway up: its
            self.stream.pick(r.grids["resid"].raw.shape[0] // 2, r.pair.differ[0])  # predictions, reach
            worker.settle()
