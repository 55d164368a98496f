"""Step 5: attribution patching, every cell from two forward passes and one backward pass, beside
the exact values, with a scatter of one against the other and their correlation."""

from __future__ import annotations

import numpy as np
import pyqtgraph as pg
from PySide6.QtWidgets import QComboBox, QFormLayout, QVBoxLayout, QWidget

from app.panels.patching import scripts
from app.panels.patching.state import EXACT, PairResult
from app.panels.patching.sweep import SweepStep, beside, grid_map, show_grid
from app.panels.scripts import Script
from app.panels.step import Live, Notice
from app.widgets.plots import plot
from app.widgets.text import note


def correlation(exact: np.ndarray, approx: np.ndarray) -> float | None:
    """Pearson's r over the cells both have (None with fewer than 3 or no spread)."""
    both = np.isfinite(exact) & np.isfinite(approx)
    x, y = exact[both], approx[both]
    if x.size < 3 or x.std() == 0 or y.std() == 0:
        return None
    return float(np.corrcoef(x, y)[0, 1])


class ApproxPage(SweepStep):
    view = "approx"

    def __init__(self, live: Live):
        super().__init__(live)
        self.what = QComboBox()
        self.what.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToContents)
        for key, text in EXACT.items():
            self.what.addItem(text, key)
        self.bind(self.what, "grid")
        self.approx_map = grid_map("One-pass estimate")
        self.exact_map = grid_map("Exact (patched runs)")
        self.scatter = plot("Estimate against exact", "exact", "estimate")
        self.points = pg.ScatterPlotItem(size=6, brush=pg.mkBrush(61, 123, 217, 160), pen=None)
        self.diagonal = pg.PlotDataItem(pen=pg.mkPen("#888", width=1, style=pg.QtCore.Qt.PenStyle.DashLine))
        self.scatter.addItem(self.diagonal)
        self.scatter.addItem(self.points)
        self.summary = note()
        controls = QFormLayout()
        controls.addRow("Grid", self.what)
        self.sweep_rows(controls)
        column = QVBoxLayout()
        column.addWidget(beside(self.approx_map, self.exact_map), 3)
        column.addWidget(self.scatter, 2)
        views = QWidget()
        views.setLayout(column)
        self.layout_with(
            "Attribution patching estimates every cell at once: (clean − corrupted activation) · "
            "the gradient of the metric. Points on the diagonal are cells the estimate gets right.",
            controls,
            views,
            (self.summary,),
        )

    def views(self) -> dict[str, QWidget]:
        return {"estimate": self.approx_map, "exact": self.exact_map, "scatter": self.scatter}

    def script(self) -> Script:
        return scripts.approx(self.state)

    def show(self, r: PairResult) -> Notice:
        what = r.state.grid
        approx, exact = r.grids.get("approx"), r.grids.get(what)
        estimate = None if approx is None else approx.grid(what)
        show_grid(self.approx_map, estimate, pair=r.pair)
        show_grid(self.exact_map, exact, pair=r.pair)
        if estimate is None or exact is None or exact.raw.shape != estimate.raw.shape:
            self.points.setData(x=[], y=[])
            self.summary.setText(f"The exact grid: {self.progress_text(exact)}.")
            return None
        x, y = exact.values.ravel(), estimate.values.ravel()
        shown = np.isfinite(x)
        self.points.setData(x=x[shown], y=y[shown])
        ends = [
            float(np.nanmin([x.min(initial=0), y.min(initial=0)])),
            float(np.nanmax([*x[shown], *y, 1.0])),
        ]
        self.diagonal.setData(x=ends, y=ends)
        r_value = correlation(exact.values, estimate.values)
        worst = np.nanmax(np.abs(exact.values - estimate.values)) if shown.any() else float("nan")
        self.summary.setText(
            f"{self.progress_text(exact)}. Correlation "
            + ("—" if r_value is None else f"{r_value:.2f}")
            + f"; the largest miss is {worst:.2f} (in units of the clean − corrupted gap)."
        )
        return None
