"""Step 4: how many of the n² cells a window (plus global tokens) computes, as n grows."""

from __future__ import annotations

import numpy as np
import pyqtgraph as pg
from PySide6.QtWidgets import QCheckBox, QFormLayout, QHBoxLayout, QVBoxLayout, QWidget

from app.panels.cost import scripts
from app.panels.cost.plots import COLORS, curve, place_slope, slope_label
from app.panels.cost.state import (
    N_MAX,
    N_MIN,
    PATTERN_PICTURE_N,
    PATTERNS,
    SparseResult,
    SparseState,
    compute_sparse,
    percent,
)
from app.panels.scripts import Script
from app.panels.step import Live, Notice, Step
from app.widgets import Heatmap, LabelledSlider
from app.widgets.plots import loglog_plot
from app.widgets.spin_boxes import spin
from app.widgets.text import note


class SparsePage(Step):
    def __init__(self):
        super().__init__(Live(SparseState(), compute_sparse))
        s = self.state
        self.n_slider = self.bind(LabelledSlider("n", N_MIN, N_MAX, s.n, log=True, integer=True), "n", int)
        self.window_slider = self.bind(
            LabelledSlider("window w", 1, 4_096, s.window, log=True, integer=True), "window", int
        )
        self.global_spin = self.bind(spin(s.n_global, 0, 64, tracking=True), "n_global")
        self.causal_box = self.bind(QCheckBox("causal"), "causal")
        form = QFormLayout()
        form.addRow(self.n_slider)
        form.addRow(self.window_slider)
        form.addRow("global tokens", self.global_spin)
        form.addRow(self.causal_box)
        self.note = note()
        self.picture = Heatmap(
            f"The pattern at {PATTERN_PICTURE_N} tokens", colorbar=False, cell_text=False, max_ticks=12
        )
        left = QVBoxLayout()
        left.addLayout(form)
        left.addWidget(self.note)
        left.addWidget(self.picture, 1)
        self.cells_plot = loglog_plot("Cells computed", "cells", legend_at=(8, 8))
        self.fraction_plot = loglog_plot("Share of the n² cells", "fraction", legend_at=(8, -8))
        self.cell_curves = {
            key: curve(self.cells_plot, name, COLORS[k]) for k, (key, name) in enumerate(PATTERNS.items())
        }
        # the same colours as the plot beside it, whose legend names them (one legend saves room)
        self.fraction_curves = {
            key: curve(self.fraction_plot, None, COLORS[k]) for k, key in enumerate(PATTERNS)
        }
        anchors = {"full": (0, 1), "window": (0, 0), "global": (1, 1)}
        self.cell_slopes = {
            key: slope_label(self.cells_plot, COLORS[k], anchors[key]) for k, key in enumerate(PATTERNS)
        }
        self.n_lines = [pg.InfiniteLine(angle=90, pen=pg.mkPen("#888888")) for _ in range(2)]
        self.cells_plot.addItem(self.n_lines[0])
        self.fraction_plot.addItem(self.n_lines[1])
        plots = QHBoxLayout()
        plots.addWidget(self.cells_plot)
        plots.addWidget(self.fraction_plot)
        self.layout_with(None, left, plots)

    def views(self) -> dict[str, QWidget]:
        return {"sparse_cells": self.cells_plot}

    def script(self) -> Script:
        return scripts.sparse(self.state)

    def draw(self, r: SparseResult) -> Notice:
        s = r.state
        self.picture.set_data(r.picture.astype(float), levels=(0.0, 1.0))
        squares = np.square(r.grid, dtype=float)
        for key, cells in r.cells.items():
            self.cell_curves[key].setData(r.grid, np.array(cells, dtype=float))
            self.fraction_curves[key].setData(r.grid, np.array(cells, dtype=float) / squares)
            place_slope(self.cell_slopes[key], r.grid, cells, s.n)
        for line in self.n_lines:
            line.setValue(np.log10(s.n))
        total, now = s.n * s.n, r.now
        self.note.setText(
            f"At <b>n = {s.n:,}</b> there are {total:,} query–key cells. Full attention"
            f"{' (causal)' if s.causal else ''} computes {now['full']:,} ({percent(now['full'], total)}); "
            f"a window of {s.window:,} computes {now['window']:,} ({percent(now['window'], total)}); "
            f"with {s.n_global} global token(s) {now['global']:,} ({percent(now['global'], total)}). "
            "A window on both sides costs about n·(2w − 1), a causal one about n·w; each global token "
            "adds about 2n: linear, not quadratic."
        )
        return None

    def exercise(self) -> None:
        self.global_spin.setValue(64)  # more than the picture holds: a message
        self.global_spin.setValue(0)
        self.window_slider.setValue(4_096)
        self.window_slider.setValue(1)
        self.causal_box.setChecked(True)
        self.n_slider.setValue(N_MAX)
        self.causal_box.setChecked(False)
        self.window_slider.setValue(8)
        self.global_spin.setValue(2)
        self.n_slider.setValue(4_096)
