"""Step 2: the sinusoidal encoding as a heatmap, a few of its waves, and its offset dot product."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pyqtgraph as pg
from PySide6.QtWidgets import QFormLayout, QHBoxLayout, QVBoxLayout, QWidget

from app.panels.position_steps.page import HEATMAP_ROWS, Notice, Page, base_spin, plot, spin
from app.widgets import Heatmap
from app.widgets.controls import note
from core import positional as pos
from core.explain import num

CURVE_POSITIONS = 64
MAX_OFFSET = 128
CURVE_COLORS = ("#d62728", "#1f77b4", "#2ca02c", "#9467bd")


@dataclass(frozen=True)
class SinusoidalState:
    n: int = 128
    d: int = 64
    base: float = pos.ROPE_BASE


@dataclass(frozen=True)
class SinusoidalResult:
    rows: np.ndarray  # (r,) the positions shown as heatmap rows
    table: np.ndarray  # (r, d)
    curve_positions: np.ndarray  # (c,)
    curve_pairs: np.ndarray  # (k,) pair index of each plotted curve
    curves: np.ndarray  # (c, k) sin(p·ω_i) of those pairs
    offsets: np.ndarray  # (o,)
    offset_dot: np.ndarray  # (o,)
    n: int


class SinusoidalPage(Page):
    def __init__(self, report):
        super().__init__(SinusoidalState(), report)
        s = self.state
        self.n_spin = spin(s.n, 0, 100_000_000)
        self.d_spin = spin(s.d, 0, 1024, step=2)
        self.base_spin = base_spin(s.base)
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
        holder = QWidget()
        holder.setLayout(views)
        self.layout_with(
            "Pair i of dimensions holds sin(p·ωᵢ) and cos(p·ωᵢ) with ωᵢ = base^(−2i/d): the first "
            "pairs change fast, the last very slowly. Any position can be computed, even 1,000,000.",
            controls,
            holder,
        )
        self.n_spin.valueChanged.connect(lambda v: self.apply(n=v))
        self.d_spin.valueChanged.connect(lambda v: self.apply(d=v))
        self.base_spin.valueChanged.connect(lambda v: self.apply(base=v))

    def compute(self, s: SinusoidalState) -> SinusoidalResult:
        rows = pos.sample_positions(s.n, HEATMAP_ROWS)
        table = pos.sinusoidal_at(rows, s.d, s.base)
        curve_positions = np.arange(min(s.n, CURVE_POSITIONS))
        pairs = np.unique([0, s.d // 16, s.d // 8, s.d // 4])[: len(CURVE_COLORS)]
        pairs = pairs[pairs < s.d // 2]
        curves = pos.sinusoidal_at(curve_positions, s.d, s.base)[:, 2 * pairs]
        reach = min(s.n - 1, MAX_OFFSET)
        offsets = np.arange(-reach, reach + 1)
        dots = pos.sinusoidal_offset_dot(offsets, s.d, s.base)
        return SinusoidalResult(rows, table, curve_positions, pairs, curves, offsets, dots, s.n)

    def draw(self, r: SinusoidalResult) -> Notice:
        self.result = r
        dims = [str(j) for j in range(r.table.shape[1])]
        self.heatmap.set_data(r.table, [f"{p:,}" for p in r.rows], dims, levels=(-1.0, 1.0))
        w = pos.frequencies(r.table.shape[1], self.state.base)
        key = []
        for k, (curve, color) in enumerate(zip(self.curves, CURVE_COLORS, strict=True)):
            if k < len(r.curve_pairs):
                i = r.curve_pairs[k]
                curve.setData(r.curve_positions, r.curves[:, k])
                period = num(2 * np.pi / w[i], 1)
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
        return f"{fn}({p:,} × ω_{pair}), ω_{pair} = base^(−{2 * pair}/{self.state.d})"
