"""Panel "The residual stream": one token's stream through every block, the norm before every read,
the final stream as a sum of parts with each part's direct push on the logits, and steering the
model with one vector added to the stream."""

from __future__ import annotations

from app.panels.model_row import ModelRow
from app.panels.row_panel import RowPanel
from app.panels.step import Live
from app.panels.stream.journey import JourneyPage
from app.panels.stream.norm import NormPage
from app.panels.stream.parts import PartsPage
from app.panels.stream.state import StreamState, compute_stream
from app.panels.stream.steering import SteerPage
from core.models import DECODER, smollm2


class StreamPanel(RowPanel):
    steps = ("One token's journey", "The norm before every read", "The stream as a sum", "Steering")

    def __init__(self, parent=None):
        super().__init__(parent)
        live = Live(StreamState(), compute_stream, background=True)  # steps 1–3 share it
        self.journey = JourneyPage(live)
        self.norm = NormPage(live)
        self.parts = PartsPage(live)
        self.steer = SteerPage()
        self.row = ModelRow(DECODER, "stream", default=smollm2.KEY, fallback=smollm2.KEY)
        self.body.addWidget(self.row)
        self.add_steps(self.journey, self.norm, self.parts, self.steer)
        self.row.loaded.connect(self._run_on)
        self.row.said.connect(self.show_message)
        for live in self.lives():
            live.failed.connect(self.offer_missing)  # after the message bar's slot
        self.set_step(0)

    def lives(self) -> list[Live]:
        return [self.journey.live, self.steer.live]

    def _run_on(self, model) -> None:
        for live in self.lives():
            if live.wanted.source != model.source:
                live.apply(source=model.source)

    def exercise(self) -> None:
        from app import worker

        bad = ({"position": 99}, {"position": 2}, {"norm": 99}, {"norm": 0}, {"group": "kind"})
        self.try_changes(self.journey.live, *bad, back=("position", "norm", "group"))
        steer = self.steer.live
        bad = ({"plus": steer.state.minus}, {"layer": 99}, {"strength": 1e9}, {"mode": "remove"})
        self.try_changes(steer, *bad, back=("plus", "layer", "strength", "mode"))
        super().exercise()
        worker.settle()
