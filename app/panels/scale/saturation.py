"""Step 1: stretch a few scores and watch softmax saturate and its slope vanish."""

from __future__ import annotations

import numpy as np
import pyqtgraph as pg
from PySide6.QtWidgets import QHBoxLayout, QLabel, QLineEdit, QWidget

from app.panels.scale import scripts
from app.panels.scale.state import MULTIPLIER_GRID, SaturationResult, SaturationState, compute_saturation
from app.panels.scale.views import add_plot, marker
from app.panels.scripts import Script
from app.panels.step import Live, Notice, Step
from app.widgets import LabelledSlider
from app.widgets.text import note
from core.maths import explain


class SaturationPage(Step):
    def __init__(self):
        super().__init__(Live(SaturationState(), compute_saturation))
        s = self.state
        self.drawn_sweep = None  # the sweep on screen, to redraw the curve and axes only when it changes
        self.scores_edit = self.bind(QLineEdit(s.scores), "scores")
        self.scores_edit.setPlaceholderText("numbers separated by commas, e.g. 1, 2, 3")
        self.multiplier_slider = self.bind(
            LabelledSlider("Multiplier ×", 0, 16, s.multiplier, integer=True), "multiplier", float
        )
        controls = QHBoxLayout()
        controls.addWidget(QLabel("Scores"))
        controls.addWidget(self.scores_edit, 1)
        controls.addWidget(self.multiplier_slider, 2)

        self.view = pg.GraphicsLayoutWidget()
        self.weights_plot = add_plot(self.view, "Weights softmax(scores × m)", "score", "weight", 0, 0)
        self.weights_plot.setYRange(0, 1.05, padding=0)
        self.weight_bars = pg.BarGraphItem(x=[0], height=[0], width=0.6, brush="#3d7bd9")
        self.weights_plot.addItem(self.weight_bars)
        self.slope_plot = add_plot(
            self.view, "Slope of each weight ∂pᵢ/∂zᵢ = pᵢ(1 − pᵢ)", "score", "slope", 0, 1
        )
        self.slope_plot.setYRange(0, 0.26, padding=0)
        self.slope_bars = pg.BarGraphItem(x=[0], height=[0], width=0.6, brush="#2ca02c")
        self.slope_plot.addItem(self.slope_bars)
        self.gradient_plot = add_plot(
            self.view, "The winner's slope as the multiplier grows", "multiplier m", "slope", 1, 0, colspan=2
        )
        self.gradient_plot.setXRange(0, 16, padding=0.02)
        self.gradient_plot.setYRange(0, 0.26, padding=0)
        self.gradient_curve = self.gradient_plot.plot(pen=pg.mkPen("#2ca02c", width=2))
        self.gradient_marker = marker()
        self.gradient_plot.addItem(self.gradient_marker)
        self.readout = note("")
        self.layout_with(
            "Type a few scores and stretch them with the multiplier. Larger scores make the softmax "
            "more decisive; once one weight is near 1, every slope is near 0 and learning stalls.",
            controls,
            self.view,
            (self.readout,),
            on_top=True,
        )

    def views(self) -> dict[str, QWidget]:
        return {"saturation": self.view}

    def script(self) -> Script:
        return scripts.saturation(self.state)

    def draw(self, r: SaturationResult) -> Notice:
        if r.sweep is not self.drawn_sweep:  # the cached sweep: new only when the scores change
            self.drawn_sweep = r.sweep
            self.gradient_curve.setData(MULTIPLIER_GRID, r.sweep)
            ticks = [[(k, explain.num(v, 2).rstrip("0").rstrip(".")) for k, v in enumerate(r.scores)]]
            for plot in (self.weights_plot, self.slope_plot):
                plot.getAxis("bottom").setTicks(ticks)
                plot.setXRange(-0.6, len(r.scores) - 0.4, padding=0)
        sat = r.now
        x = np.arange(sat.weights.size)
        self.weight_bars.setOpts(x=x, height=sat.weights)
        self.slope_bars.setOpts(x=x, height=np.diag(sat.jacobian))
        self.gradient_marker.setData([sat.multiplier], [sat.winner_gradient])
        weights = " / ".join(explain.num(w) for w in sat.weights)
        logits = ", ".join(explain.num(z, 2) for z in sat.logits)
        self.readout.setText(
            f"×{sat.multiplier:g}: softmax inputs {logits} → weights {weights}.  "
            f"The winner's slope p(1 − p) = {sat.winner_gradient:.3g} (at most 0.25)."
        )
        return None
