"""Step 2: the sinusoidal encoding as a heatmap, a few of its waves, and its offset dot product."""

from __future__ import annotations

import numpy as np
import pyqtgraph as pg
from PySide6.QtWidgets import QFormLayout, QHBoxLayout, QVBoxLayout, QWidget

from app.panels.position import scripts
from app.panels.position.state import SinusoidalResult, SinusoidalState, compute_sinusoidal
from app.panels.scripts import Script
from app.panels.step import Live, Notice, Step
from app.widgets import Heatmap
from app.widgets.plots import plot
from app.widgets.spin_boxes import float_spin, spin
from app.widgets.text import note
from core.maths.explain import num

CURVE_COLORS = ("#d62728", "#1f77b4", "#2ca02c", "#9467bd")


class SinusoidalPage(Step):
    def __init__(self):
        super().__init__(Live(SinusoidalState(), compute_sinusoidal))
        s = self.state
        self.n_spin = self.bind(spin(s.n, 0, 100_000_000), "n")
        self.d_spin = self.bind(spin(s.d, 0, 1024, step=2), "d")
        # A wide range: the page explains why a base is bad rather than refusing to type it.
        self.base_spin = self.bind(float_spin(s.base, -1e6, 1e9), "base")
        controls = QFormLayout()
        controls.addRow("Positions n", self.n_spin)
        controls.addRow("Width d", self.d_spin)
        controls.addRow("Base", self.base_spin)
        self.heatmap = Heatmap("Encoding: position × dimension", signed=True, cell_text=False, max_ticks=8)
        self.heatmap.set_describer(self._describe)
        self.curves_plot = plot("A few dimensions along the sequence", "position p", "sin(p·ωᵢ)")
        self.curves = [self.curves_plot.plot(pen=pg.mkPen(c, width=2)) for c in CURVE_COLORS]
        self.curve_key = note()
        self.dot_plot = plot("PE(p)·PE(p + k), the same for every p", "offset k", "dot product")
        self.dot_curve = self.dot_plot.plot(pen=pg.mkPen("#1f77b4", width=2))
        plots = QVBoxLayout()
        plots.addWidget(self.curves_plot)
        plots.addWidget(self.curve_key)
        plots.addWidget(self.dot_plot)
        views = QHBoxLayout()
        views.addWidget(self.heatmap, 1)
        views.addLayout(plots, 1)
        self.layout_with(
            "Pair i of dimensions holds sin(p·ωᵢ) and cos(p·ωᵢ) with ωᵢ = base^(−2i/d): the first "
            "pairs change fast, the last very slowly. Any position can be computed, even 1,000,000.",
            controls,
            views,
        )

    def views(self) -> dict[str, QWidget]:
        return {"sinusoidal": self.heatmap}

    def script(self) -> Script:
        return scripts.sinusoidal(self.state)

    def draw(self, r: SinusoidalResult) -> Notice:
        dims = [str(j) for j in range(r.table.shape[1])]
        self.heatmap.set_data(r.table, [f"{p:,}" for p in r.rows], dims, levels=(-1.0, 1.0))
        key = []
        for k, (curve, color) in enumerate(zip(self.curves, CURVE_COLORS, strict=True)):
            if k < len(r.curve_pairs):
                i = r.curve_pairs[k]
                curve.setData(r.curve_positions, r.curves[:, k])
                period = num(2 * np.pi / r.freqs[i], 1)
                key.append(f'<span style="color:{color}">━ pair {i}: a cycle every {period}</span>')
            else:
                curve.setData([], [])
        self.curve_key.setText(" &nbsp; ".join(key) + " positions")
        self.dot_curve.setData(r.offsets, r.offset_dot)
        if r.rows.size < r.n:
            return (
                f"Showing {r.rows.size} of {r.n:,} positions, evenly spaced (first and last "
                f"included); every one of them is computed, none stored.",
                "info",
            )
        return None

    def _describe(self, i: int, j: int) -> str:
        p, pair = self.result.rows[i], j // 2
        fn = "sin" if j % 2 == 0 else "cos"
        return f"{fn}({p:,} × ω_{pair}), ω_{pair} = base^(−{2 * pair}/{self.result.table.shape[1]})"
