"""Panel "Circuits": how the heads and MLPs that carry an answer connect. Every edge of the
model's graph scored by edge attribution patching (EAP or EAP-IG), the top N drawn layer by
layer, how much of the answer that circuit keeps, and the estimates checked edge by edge.
One state for every step, computed in the worker; the circuit lands first, the curves and the
exact effects after it."""

from __future__ import annotations

from PySide6.QtWidgets import QHBoxLayout

from app.panels.circuits.circuit import CircuitPage
from app.panels.circuits.exact import ExactPage
from app.panels.circuits.faithful import FaithfulPage
from app.panels.circuits.pair import PairPage
from app.panels.circuits.state import CircuitState, compute_circuit
from app.panels.model_row import ModelRow
from app.panels.row_panel import RowPanel
from app.panels.step import Live
from core.interp.patching import PAIRS
from core.models import DECODER, smollm2


class CircuitsPanel(RowPanel):
    steps = ("The pair", "The circuit", "Faithfulness", "Edges against exact")

    def __init__(self, parent=None):
        super().__init__(parent)
        self.live = Live(CircuitState(), compute_circuit, background=True)
        self.progress, self.cancel = self.runs_of(self.live)
        self.row = ModelRow(DECODER, "circuits", default=smollm2.KEY, fallback=smollm2.KEY)
        running = QHBoxLayout()
        running.addWidget(self.progress, 1)
        running.addWidget(self.cancel)
        self.body.addWidget(self.row)
        self.body.addLayout(running)
        self.pair = PairPage(self.live)
        self.circuit = CircuitPage(self.live, self.openHead.emit)
        self.faithful = FaithfulPage(self.live)
        self.exact = ExactPage(self.live)
        self.add_steps(self.pair, self.circuit, self.faithful, self.exact)
        self.follow_row(self.live)
        self.set_step(0)

    def exercise(self) -> None:
        from app import worker

        clean, corrupt, target, foil = PAIRS["A fact"]
        bad = ({"edges": 10**9}, {"target": "Mary", "foil": "Mary"}, {"corrupt": "When Mary went"},
               {"steps": 0}, {"edge": 999}, {"method": "eap-ig", "steps": 2}, {"direction": "noise"},
               {"clean": clean, "corrupt": corrupt, "target": target, "foil": foil})  # fmt: skip
        fields = ("edges", "target", "foil", "clean", "corrupt", "steps", "edge", "method", "direction")
        self.try_changes(self.live, *bad, back=fields)
        self.live.apply(edge=1)
        worker.settle()
        super().exercise()
        worker.settle()
