"""Step 2: the circuit drawn layer by layer, its size on a slider; hover an edge for its score,
click one for its exact effect, click a head to open it in Inside a head."""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtWidgets import QComboBox, QFormLayout, QWidget

from app.panels.circuits import scripts
from app.panels.circuits.drawing import DRAWN, CircuitView
from app.panels.circuits.state import CircuitResult
from app.panels.scripts import Script
from app.panels.step import Live, Notice, Step
from app.widgets.sliders import LabelledSlider
from app.widgets.spin_boxes import spin
from app.widgets.tables import fill_table, text_table
from app.widgets.text import note

METHODS = {"eap": "EAP: one gradient", "eap-ig": "EAP-IG: the gradient averaged"}


def edge_text(r: CircuitResult, edge) -> str:
    d = edge.describe(r.scores.graph)
    into = f"{d['to']} ({d['input']})" if d["input"] else d["to"]
    return f"{d['from']} → {into}: score {edge.score:+.3f}"


class CircuitPage(Step):
    def __init__(self, live: Live, open_head: Callable[[dict], None]):
        super().__init__(live)
        self.open_head = open_head  # shows the clicked head, as a cell, in Inside a head
        self.method = QComboBox()
        for key, text in METHODS.items():
            self.method.addItem(text, key)
        self.bind(self.method, "method")
        self.steps = self.bind(spin(self.state.steps, 1, 64), "steps")
        self.circuit_size = LabelledSlider("Edges", 1, 100_000, self.state.edges, log=True, integer=True)
        self.bind(self.circuit_size, "edges", int)
        self.view = CircuitView()
        self.table = text_table(("from", "to", "input", "score"), size_columns=True)
        self.hover = note()
        self.summary = note(rich=True)
        self.chosen = note(rich=True)
        form = QFormLayout()
        form.addRow("Method", self.method)
        form.addRow("EAP-IG steps", self.steps)
        form.addRow(self.circuit_size)
        self.table.setMinimumHeight(0)  # in the notes' scrolling column: it scrolls with them
        self.layout_with(
            "Every edge joins a part that writes into the stream (the embeddings, a head, an MLP) to "
            "one that reads it later (a head's query, key or value, an MLP, the logits). The top N "
            "edges by |score| make the circuit; edges off every path from the embeddings to the "
            "logits are pruned.",
            form,
            self.view,  # the table folds under the controls: the drawing gets the width
            (self.summary, self.table, self.hover, self.chosen),
        )
        self.view.hovered.connect(self.hover.setText)
        self.view.edge_clicked.connect(lambda i: self.apply(edge=i + 1))
        self.view.head_clicked.connect(self._open)

    def views(self) -> dict[str, QWidget]:
        return {"circuit": self.table}

    def _open(self, layer: int, head: int) -> None:
        r = self.live.result
        if r is not None:
            cell = {"layer": layer + 1, "head": head + 1, "query": 0, "key": r.pair.differ[0] + 1}
            self.open_head({"source": r.model.source, "prompt": r.state.clean, **cell})

    def script(self) -> Script:
        return scripts.circuit(self.state)

    def draw(self, r: CircuitResult) -> Notice:
        self.circuit_size.set_maximum(r.scores.count)
        drawn = list(r.shown[:DRAWN])
        self.view.show_circuit(r.scores.graph, drawn, list(r.nodes), [edge_text(r, e) for e in drawn])
        rows = [e.describe(r.scores.graph) for e in drawn]
        fill_table(self.table, [[d["from"], d["to"], d["input"] or "", f"{d['score']:.3f}"] for d in rows])
        more = f" The {DRAWN} largest are drawn." if len(r.shown) > DRAWN else ""
        self.summary.setText(
            f"<b>{len(r.shown)}</b> of the top {r.state.edges} edges reach from the embeddings to the "
            f"logits, joining {len(r.nodes)} nodes ({r.scores.count:,} edges in all).{more}"
        )
        if r.chosen is None:
            self.chosen.setText("Click an edge to patch it alone.")
        else:
            edge, effect = r.chosen
            self.chosen.setText(
                f"{edge_text(r, edge)}; patched alone it moves the metric <b>{effect:+.3f}</b>."
            )
        return None
