"""Step 3: a learned position table and the first position it has no row for."""

from __future__ import annotations

import numpy as np
import pyqtgraph as pg
from PySide6.QtWidgets import QFormLayout, QVBoxLayout, QWidget

from app.panels.position import scripts
from app.panels.position.state import (
    HEATMAP_ROWS,
    MAX_TABLE_ROWS,
    TABLE_WIDTH,
    TableResult,
    TableState,
    compute_table,
)
from app.panels.scripts import Script
from app.panels.step import Live, Notice, Step
from app.widgets import Heatmap
from app.widgets.plots import plot
from app.widgets.spin_boxes import spin
from core.maths import positional as pos


class TablePage(Step):
    def __init__(self):
        super().__init__(Live(TableState(), compute_table))
        s = self.state
        self.rows_spin = self.bind(spin(s.rows, 0, MAX_TABLE_ROWS), "rows")
        self.length_spin = self.bind(spin(s.length, 0, 10_000_000), "length")
        controls = QFormLayout()
        controls.addRow("Table rows", self.rows_spin)
        controls.addRow("Sequence length", self.length_spin)
        self.heatmap = Heatmap("Vectors the sequence gets", signed=True, cell_text=False, max_ticks=8)
        self.coverage = plot("Positions with a vector", "position (counting from 1)", "")
        self.coverage.hideAxis("left")
        self.coverage.setYRange(0, 1.2, padding=0)
        self.covered = self.coverage.plot(fillLevel=0, brush="#2ca02c88", pen=None)
        self.uncovered = self.coverage.plot(fillLevel=0, brush="#d6272888", pen=None)
        self.end_line = pg.InfiniteLine(
            angle=90,
            pen=pg.mkPen("#d62728", width=2),
            label="",
            labelOpts={
                "position": 0.85,
                "color": "#ffffff",
                "fill": "#d62728",
                "anchors": [(1, 0.5), (1, 0.5)],
            },
        )
        self.coverage.addItem(self.end_line)
        views = QVBoxLayout()
        views.addWidget(self.heatmap, 3)
        views.addWidget(self.coverage, 1)
        self.layout_with(
            "A learned table stores one vector per position (GPT-2: 1,024 rows). The vectors here "
            "are random, as before training; what matters is that the table has an end.",
            controls,
            views,
        )

    def views(self) -> dict[str, QWidget]:
        return {"table": self.heatmap}

    def script(self) -> Script:
        return scripts.learned_table(self.state)

    def draw(self, r: TableResult) -> Notice:
        shown = pos.sample_positions(len(r.vectors), HEATMAP_ROWS)
        dims = [str(j) for j in range(TABLE_WIDTH)]
        top = float(np.abs(r.table.vectors).max())
        self.heatmap.set_data(r.vectors[shown], [f"{p + 1:,}" for p in shown], dims, levels=(-top, top))
        covered = min(r.length, r.table.rows)
        self.covered.setData([0.5, covered + 0.5], [1.0, 1.0])
        if r.missing is None:
            self.uncovered.setData([], [])
        else:
            self.uncovered.setData([covered + 0.5, r.length + 0.5], [1.0, 1.0])
        self.end_line.setPos(r.table.rows + 0.5)
        self.end_line.label.setFormat(f"last row: {r.table.rows:,}")
        self.coverage.setXRange(0.5, max(r.length, r.table.rows) * 1.05 + 0.5, padding=0)
        return None if r.missing is None else (str(r.missing), "warning")
