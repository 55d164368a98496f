"""Panel "Inside a head": one real head's q, k, score and weight; why the query matches the key
(the score split into the parts of the residual stream); what the head writes; and every
component's direct share of the answer. One state for every step, computed in the worker."""

from __future__ import annotations

from PySide6.QtWidgets import QFormLayout, QHBoxLayout, QLabel, QVBoxLayout, QWidget

from app.panels.binding import bind
from app.panels.inside_head.direct import DirectPage
from app.panels.inside_head.real_head import RealHeadPage
from app.panels.inside_head.state import HeadState, compute_inside
from app.panels.inside_head.why_here import WhyHerePage
from app.panels.inside_head.writes import WritesPage
from app.panels.model_row import ModelRow
from app.panels.row_panel import RowPanel
from app.panels.step import Live
from app.widgets.side_column import side_column
from app.widgets.spin_boxes import spin
from app.widgets.text import TextBox, note
from core.models import smollm2

MOST = 10_000  # layers, heads or tokens: the model refuses what it does not have, with a message


def first_cell(source: str) -> dict[str, int]:
    """The head and cell a model opens on: SmolLM2's head that looks at Mary, else the first head
    from the last token to the first."""
    if source == HeadState.source:
        return {f: getattr(HeadState, f) for f in ("layer", "head", "query", "key")}
    return {"layer": 1, "head": 1, "query": 0, "key": 1}


class InsideHeadPanel(RowPanel):
    steps = ("A real head, step by step", "Why here", "What it writes", "Direct share of the answer")

    def __init__(self, parent=None):
        super().__init__(parent)
        self.live = Live(HeadState(), compute_inside, background=True)  # step 1 lands first
        self.row = ModelRow(None, "inside_head", default=smollm2.KEY)  # encoders too: step 1 reads them
        row = QHBoxLayout()
        row.addWidget(self._controls())
        prompt_row = QHBoxLayout()  # the prompt across the page: it is read whole, token by token
        prompt_row.addWidget(QLabel("Prompt"))
        prompt_row.addWidget(self.prompt, 1)
        self.body.addWidget(self.row)
        self.body.addLayout(prompt_row)
        self.body.addLayout(row)
        self.real = RealHeadPage(self.live)
        self.why = WhyHerePage(self.live)
        self.writes = WritesPage(self.live)
        self.direct = DirectPage(self.live)
        self.add_steps(self.real, self.why, self.writes, self.direct, into=row)
        self.live.changed.connect(self._describe)
        self.live.busy.connect(self._busy)
        self.live.failed.connect(self.offer_missing)  # after the message bar's slot: the offer replaces it
        self.row.loaded.connect(self._run_on)
        self.row.said.connect(self.show_message)
        self._described = "Loading the model…"
        self.set_step(0)

    def _controls(self) -> QWidget:
        live, s = self.live, self.live.state
        self.prompt = bind(TextBox(s.prompt), live, "prompt")
        self.layer = bind(spin(s.layer, 1, MOST), live, "layer")
        self.head = bind(spin(s.head, 1, MOST), live, "head")
        self.query = bind(spin(s.query, 0, MOST), live, "query")
        self.query.setSpecialValueText("last")
        self.key_spin = bind(spin(s.key, 1, MOST), live, "key")
        self.info = note("Loading the model…")
        form = QFormLayout()
        form.addRow("Layer", self.layer)
        form.addRow("Head", self.head)
        form.addRow("Query", self.query)
        form.addRow("Key", self.key_spin)
        column = QVBoxLayout()
        column.addLayout(form)
        column.addWidget(self.info)
        column.addStretch(1)
        return side_column(column)

    def open_head(self, cell: dict) -> None:
        """Show ``cell`` (source, prompt, layer, head, query, key; from 1, query 0 = last), asked
        for from another panel, at step 1."""
        self.live.apply(**cell)
        self.row.load(cell["source"])
        self.set_step(0)

    def _run_on(self, model) -> None:
        if model.source != self.live.wanted.source:
            self.live.apply(source=model.source, **first_cell(model.source))

    def _busy(self, running: bool) -> None:
        running = running or self.live.task is not None  # a superseded compute ending
        self.info.setText("Running…" if running else self._described)

    def _describe(self) -> None:
        if self.live.result is None:  # a first run cancelled before it landed: nothing to describe yet
            return
        m = self.live.result.model
        self._described = f"{m.name}: {m.n_layers} layers × {m.n_heads} heads"
        self.info.setText(self._described)

    def exercise(self) -> None:
        from app import worker

        changes = ({"layer": 99}, {"layer": 1}, {"key": 99}, {"query": 2, "key": 5}, {"query": 3, "key": 1})
        self.try_changes(self.live, *changes, back=("layer", "query", "key"))
        worker.settle()
        self.direct.foil.setText(self.direct.target.text())
        self.direct.foil.setText("John")
        super().exercise()
        worker.settle()
