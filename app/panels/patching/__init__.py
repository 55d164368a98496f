"""Panel "Patching": which activations carry a decoder's answer. A clean and a corrupted prompt;
activations copied from one run into the other, the residual stream, attention and MLP outputs
and every head; and the one-pass approximation (attribution patching)."""

from __future__ import annotations

from PySide6.QtWidgets import QWidget

from app.panels.model_row import ModelRow
from app.panels.patching.approx import ApproxPage
from app.panels.patching.heads import HeadsPage
from app.panels.patching.parts import PartsPage
from app.panels.patching.state import PairState, compute_pair
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
        shared: dict = {}  # whole grids, so a step shows what another already swept
        self.stream = StreamPage(live, shared)
        self.parts = PartsPage(live, shared)
        self.heads = HeadsPage(live, shared)
        self.approx = ApproxPage(live, shared)
        self.row = ModelRow(DECODER, "patching", default=smollm2.KEY, fallback=smollm2.KEY)
        self.body.addWidget(self.row)
        self.add_steps(self.runs, self.stream, self.parts, self.heads, self.approx)
        self.row.loaded.connect(lambda model: self.runs.apply(source=model.source))
        self.row.said.connect(self.show_message)
        self.heads.open_head.connect(self.openHead.emit)
        live.failed.connect(self.offer_missing)
        self.set_step(0)

    def sweeps(self) -> list:
        return [self.stream, self.parts, self.heads, self.approx]

    def show_step(self, i: int) -> None:
        """Show step ``i``; the sweeps of the other steps stop (they resume when shown again)."""
        for page in self.sweeps():
            if page is not self.step_pages[i] and page.pause():
                page.mark_stale()  # not on screen: it sweeps again when shown
        super().show_step(i)

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
        grid = self.stream.grids.get("resid")
        if grid is not None:  # the changed name's stream, halfway up: its predictions, what it reaches
            self.stream.pick(grid.raw.shape[0] // 2, self.runs.result.pair.differ[0])
            worker.settle()

    def export(self) -> dict[str, QWidget]:
        return {
            "clean": self.runs.clean_bars.plot,
            "corrupted": self.runs.corrupt_bars.plot,
            "stream": self.stream.map,
            "attention": self.parts.attn_map,
            "mlp": self.parts.mlp_map,
            "heads": self.heads.heads_map,
            "knockout": self.heads.knock_map,
            "head": self.heads.head_map,
            "estimate": self.approx.approx_map,
            "exact": self.approx.exact_map,
            "scatter": self.approx.scatter,
        }
