"""Panel "Head atlas": every head of a model scored at once (previous token, first token, self,
duplicate token, induction, copying), the chosen head on the two probes, its queries and keys as
one cloud, and what its OV circuit copies. One state for every step, computed in the worker."""

from __future__ import annotations

from app.panels.atlas.cloud import CloudPage
from app.panels.atlas.copies import CopiesPage
from app.panels.atlas.maps import MapsPage
from app.panels.atlas.probes import ProbesPage
from app.panels.atlas.state import AtlasState, compute_atlas
from app.panels.model_row import ModelRow
from app.panels.row_panel import RowPanel
from app.panels.step import Live
from core.models import smollm2


class AtlasPanel(RowPanel):
    steps = ("The atlas", "The head on the probes", "Queries and keys as a cloud", "What it copies")

    def __init__(self, parent=None):
        super().__init__(parent)
        self.live = Live(AtlasState(), compute_atlas, background=True)
        self.maps = MapsPage(self.live)
        self.probes = ProbesPage(self.live)
        self.cloud = CloudPage(self.live)
        self.copies = CopiesPage(self.live)
        self.row = ModelRow(None, "atlas", default=smollm2.KEY, fallback=smollm2.KEY)  # encoders too
        self.body.addWidget(self.row)
        self.add_steps(self.maps, self.probes, self.cloud, self.copies)
        self.row.loaded.connect(self._run_on)
        self.row.said.connect(self.show_message)
        self.live.failed.connect(self.offer_missing)  # after the message bar's slot
        self.set_step(0)

    def _run_on(self, model) -> None:
        if model.source != self.live.wanted.source:
            cell = {} if model.source == AtlasState.source else {"layer": 1, "head": 1}  # a head it has
            self.live.apply(source=model.source, **cell)

    def exercise(self) -> None:
        from app import worker

        bad = ({"layer": 999}, {"length": 1}, {"text": "x"}, {"score": "copying"}, {"together": True},
               {"colour": "token"}, {"token": "  "})  # fmt: skip
        self.try_changes(
            self.live, *bad, back=("layer", "length", "text", "score", "together", "colour", "token")
        )
        super().exercise()
        worker.settle()
