"""Step 1: one token's stream through every block: its size entering and leaving, what attention
and the MLP add, how close it is to the final stream, and the logit lens's reading after each."""

from __future__ import annotations

import numpy as np
import pyqtgraph as pg
from PySide6.QtWidgets import QVBoxLayout, QWidget

from app.panels.scripts import Script
from app.panels.step import Live, Notice
from app.panels.stream import scripts
from app.panels.stream.state import StreamResult
from app.panels.stream.views import PENS, TokenStep
from app.widgets.plots import legend_below, plot
from app.widgets.reflow_grid import side_by_side
from app.widgets.tables import fill_table, text_table
from app.widgets.text import note

COLUMNS = ["in", "out", "attn", "MLP", "cos final", "lens"]


class JourneyPage(TokenStep):
    def __init__(self, live: Live):
        super().__init__(live)
        self.sizes = plot("Size of the stream and of what each block adds", "layer", "norm")
        legend_below(self.sizes)
        self.curves = {
            name: self.sizes.plot(pen=pg.mkPen(color, width=2), symbol="o", symbolSize=4, name=name)
            for name, color in PENS.items()
        }
        self.cosine = plot("Cosine with the final stream", "layer", "cosine")
        self.cosine.setYRange(-1, 1, padding=0.02)
        self.cos_curve = self.cosine.plot(pen=pg.mkPen(PENS["leaving"], width=2), symbol="o", symbolSize=4)
        self.table = text_table(COLUMNS)
        self.summary = note()
        plots = QVBoxLayout()
        plots.addWidget(self.sizes, 3)
        plots.addWidget(self.cosine, 2)
        column = QWidget()
        column.setLayout(plots)
        self.layout_with(
            "Every block reads the stream and adds to it: attention, then the MLP. Follow one token "
            "through the blocks: how big the stream is, how much each part adds, how close it "
            "already is to the final stream, and what the logit lens reads there.",
            self.controls(),
            side_by_side(column, self.table),
            (self.summary,),
            wide=self.wide,
        )

    def views(self) -> dict[str, QWidget]:
        return {"sizes": self.sizes, "cosine": self.cosine}

    def script(self) -> Script:
        return scripts.journey(self.state)

    def draw(self, r: StreamResult) -> Notice:
        rows = r.journey.rows
        layers = np.arange(1, len(rows) + 1)
        series = {
            "leaving": [row.norm_out for row in rows],
            "attention adds": [row.attn_norm for row in rows],
            "MLP adds": [row.mlp_norm for row in rows],
        }
        for name, values in series.items():
            self.curves[name].setData(layers, values)
        self.cos_curve.setData(layers, [row.cos_final for row in rows])
        cells = [
            [f"{row.norm_in:.2f}", f"{row.norm_out:.2f}", f"{row.attn_norm:.2f}", f"{row.mlp_norm:.2f}",
             f"{row.cos_final:.3f}", lens]
            for row, lens in zip(rows, r.lens, strict=True)
        ]  # fmt: skip
        fill_table(self.table, cells, [str(n) for n in layers])
        token = r.labels[r.journey.position]
        halfway = next((n for n, row in enumerate(rows, 1) if row.cos_final >= 0.5), len(rows))
        self.summary.setText(
            f"Token {r.journey.position + 1} ({token}): the stream grows from {rows[0].norm_in:.3g} "
            f"to {rows[-1].norm_out:.3g}. It points within 60° of where it ends (cosine ≥ 0.5) from "
            f"layer {halfway} on; the lens reads {r.lens[-1]} after the last block."
        )
        return (r.cut, "warning") if r.cut else None
