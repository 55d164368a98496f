"""Step 1: the atlas: one layers × heads map per score, each on its own colour scale, and the heads
sorted by the chosen score. Click a cell or a row of the list to choose that head."""

from __future__ import annotations

import numpy as np
from PySide6.QtWidgets import QComboBox, QFormLayout, QLineEdit, QVBoxLayout, QWidget

from app.panels.atlas import scripts
from app.panels.atlas.state import AtlasResult
from app.panels.scripts import Script
from app.panels.step import Live, Notice, Step
from app.widgets import Heatmap
from app.widgets.reflow_grid import ReflowGrid, share_evenly
from app.widgets.spin_boxes import spin
from app.widgets.tables import fill_table, text_table
from app.widgets.text import note
from core.interp.atlas import SCORES
from core.models import DECODER

NAMES = {
    "previous_token": "Previous token",
    "first_token": "First token (sink)",
    "self": "Self",
    "duplicate_token": "Duplicate token",
    "induction": "Induction",
    "copying": "Copying (OV eigenvalues)",
}
COLUMNS = 4  # maps per row, where the room allows
MOST = 10_000  # layers or heads: the model refuses what it does not have, with a message


class MapsPage(Step):
    def __init__(self, live: Live):
        super().__init__(live)
        self.score = QComboBox()
        for key in SCORES:
            self.score.addItem(NAMES[key], key)
        self.bind(self.score, "score")
        self.layer = self.bind(spin(self.state.layer, 1, MOST), "layer")
        self.head = self.bind(spin(self.state.head, 1, MOST), "head")
        self.list = text_table(["head", "score"], row_labels=False)
        self.list.cellClicked.connect(self._pick)
        self.maps = {key: Heatmap(NAMES[key], signed=key == "copying", cell_text=False) for key in SCORES}
        self.maps["direct"] = Heatmap("Direct share of the answer", signed=True, cell_text=False)
        self.answer = self.bind(QLineEdit(self.state.answer), "answer")
        self.target = self.bind(QLineEdit(self.state.target), "target")
        self.foil = self.bind(QLineEdit(self.state.foil), "foil")
        for view in self.maps.values():
            view.clicked.connect(lambda i, j: self.apply(layer=i + 1, head=j + 1))
        maps = list(self.maps.values())
        grid = ReflowGrid(
            [(view, k // COLUMNS, k % COLUMNS, 1) for k, view in enumerate(maps)],
            [(view, k // 2, k % 2, 1) for k, view in enumerate(maps)],  # two across when room is short
            stretch=(0, 0),
        )
        share_evenly(maps)
        views = QWidget()
        views.setLayout(grid)
        self.summary = note()
        form = QFormLayout()
        form.addRow("Layer", self.layer)
        form.addRow("Head", self.head)
        form.addRow("Sort by", self.score)
        form.addRow("Target", self.target)
        form.addRow("Foil", self.foil)
        controls = QVBoxLayout()
        controls.addLayout(form)
        controls.addWidget(self.list, 1)  # the list takes the column's height
        self.layout_with(
            "Every head scored at once on two probes: an ordinary text and random tokens repeated. "
            "Rows are layers, columns heads; each map has its own colour scale. Click a head to "
            "follow it through the next steps.",
            controls,
            views,
            (self.summary,),
            wide=(("Answer to", self.answer),),
        )

    def views(self) -> dict[str, QWidget]:
        return {f"atlas_{key}": view for key, view in self.maps.items()}

    def _pick(self, row: int, _column: int) -> None:
        ranking = self.result.ranking
        if row < len(ranking):
            layer, head, _ = ranking[row]
            self.apply(layer=layer + 1, head=head + 1)

    def script(self) -> Script:
        return scripts.maps(self.state)

    def draw(self, r: AtlasResult) -> Notice:
        layers = [str(k + 1) for k in range(r.model.n_layers)]
        heads = [str(k + 1) for k in range(r.model.n_heads)]
        blank = np.full((len(layers), len(heads)), np.nan)
        for key in SCORES:
            levels = (-1.0, 1.0) if key == "copying" else None
            self.maps[key].set_data(r.atlas.scores.get(key, blank), layers, heads, levels)
            self.maps[key].set_title(
                NAMES[key] if key in r.atlas.scores else f"{NAMES[key]}: not for an encoder"
            )
        self.maps["direct"].set_data(r.direct if r.direct is not None else blank, layers, heads)
        self.maps["direct"].set_title(
            "Direct share of the answer"
            if r.direct is not None
            else "Direct share: name a target and a foil"
            if r.model.kind == DECODER
            else "Direct share: not for an encoder"
        )
        for view in self.maps.values():
            view.mark(r.layer, r.head)
        fill_table(
            self.list, [[f"L{layer + 1} H{head + 1}", f"{value:.3f}"] for layer, head, value in r.ranking]
        )
        chosen = {key: scores[r.layer, r.head] for key, scores in r.atlas.scores.items()}
        share = "" if r.direct is None else f", direct share of the answer {r.direct[r.layer, r.head]:+.3f}"
        self.summary.setText(
            f"Layer {r.layer + 1}, head {r.head + 1}: "
            + ", ".join(f"{NAMES[key].split(' (')[0].lower()} {value:.3f}" for key, value in chosen.items())
            + f"{share}. The probes: {len(r.atlas.text_ids)} tokens of text, and {r.atlas.n} random "
            "tokens twice."
            + "".join(
                f" No {NAMES[key].split(' (')[0].lower()} score: {why}."
                for key, why in r.atlas.missing.items()
            )
        )
        return (r.notice, "warning") if r.notice else None
