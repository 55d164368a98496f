"""Step 5: RoPE past the trained length, with interpolation, NTK-aware and YaRN scaling."""

from __future__ import annotations

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QComboBox, QFormLayout, QVBoxLayout, QWidget

from app.panels.binding import set_quietly
from app.panels.position import scripts
from app.panels.position.state import (
    METHODS,
    ExtensionResult,
    ExtensionState,
    compute_extension,
    extension_formula,
)
from app.panels.scripts import Script
from app.panels.step import Live, Notice, Step
from app.widgets.plots import plot
from app.widgets.quiet import quiet
from app.widgets.spin_boxes import float_spin, spin
from app.widgets.text import note
from core.maths.explain import num


class ExtensionPage(Step):
    def __init__(self):
        super().__init__(Live(ExtensionState(), compute_extension))
        s = self.state
        self.d_spin = self.bind(spin(s.d, 0, 1024, step=2), "d")
        self.base_spin = self.bind(float_spin(s.base, -1e6, 1e9), "base")
        self.trained_spin = self.bind(spin(s.trained, 0, 10_000_000), "trained")
        self.target_spin = self.bind(spin(s.target, 0, 100_000_000), "target")
        self.pair_spin = self.bind(spin(s.pair, 0, s.d // 2 - 1), "pair")
        self.method_box = QComboBox()
        for key, (name, _color) in METHODS.items():
            self.method_box.addItem(name, key)
        self.method_box.setCurrentIndex(list(METHODS).index(s.method))
        self.bind(self.method_box, "method")
        self.summary = note()
        self.formula = note()
        controls = QFormLayout()
        controls.addRow("Width d", self.d_spin)
        controls.addRow("Base", self.base_spin)
        controls.addRow("Trained length L", self.trained_spin)
        controls.addRow("Target length L′", self.target_spin)
        controls.addRow("Method", self.method_box)
        controls.addRow("Pair to follow", self.pair_spin)
        self.over_plot = plot(
            "Angle at the last position ÷ angle at L, per pair", "pair i (fast → slow)", "ratio"
        )
        self.over_plot.setLogMode(y=True)
        self.over_plot.addLegend(offset=(-10, 30))  # under the plain-RoPE line at the top
        self.turned_region = pg.LinearRegionItem(
            movable=False, brush=pg.mkBrush(128, 128, 128, 40), pen=pg.mkPen(None)
        )
        self.over_plot.addItem(self.turned_region)
        self.over_plot.addItem(
            pg.InfiniteLine(pos=0.0, angle=0, pen=pg.mkPen("#888", style=Qt.PenStyle.DashLine))
        )
        self.over_curves = {
            key: self.over_plot.plot(pen=pg.mkPen(color, width=2), name=name)
            for key, (name, color) in METHODS.items()
        }
        self.unseen_marks = self.over_plot.plot(
            pen=None, symbol="o", symbolSize=11, symbolPen=pg.mkPen("#ff8c00", width=2), symbolBrush=None
        )
        self.angle_plot = plot("One pair's angle over the target context", "position", "θ (rad)")
        self.angle_plot.addLegend(offset=(4, 4))
        self.seen_band = pg.LinearRegionItem(
            orientation="horizontal", movable=False, brush=pg.mkBrush(44, 160, 44, 40)
        )
        self.angle_plot.addItem(self.seen_band)
        self.trained_line = pg.InfiniteLine(angle=90, pen=pg.mkPen("#888", style=Qt.PenStyle.DashLine))
        self.angle_plot.addItem(self.trained_line)
        self.angle_curves = {
            key: self.angle_plot.plot(pen=pg.mkPen(color, width=2)) for key, (_name, color) in METHODS.items()
        }
        views = QVBoxLayout()
        views.addWidget(self.over_plot, 1)
        views.addWidget(self.angle_plot, 1)
        self.layout_with(
            "A model trained on L positions has met only the angles those positions produce. Pairs "
            "in the grey band made a full turn in training, so every angle is familiar; any other "
            "pair above 1 points where training never went (circled for the chosen method).",
            controls,
            views,
            (self.formula, self.summary),
        )

    def views(self) -> dict[str, QWidget]:
        return {"extension": self.over_plot}

    def script(self) -> Script:
        return scripts.extension(self.state)

    def draw(self, r: ExtensionResult) -> Notice:
        s = r.state
        half = s.d // 2
        pairs = np.arange(half)
        for key, curve in self.over_curves.items():
            curve.setData(pairs, r.overshoot[key])
        chosen = r.unseen[s.method]
        self.unseen_marks.setData(pairs[chosen], r.overshoot[s.method][chosen])
        last_turned = int(np.count_nonzero(r.turned)) - 0.5
        self.turned_region.setRegion((-0.5, last_turned))
        self.turned_region.setVisible(bool(r.turned.any()))
        self.over_plot.setXRange(-0.5, half - 0.5, padding=0.02)
        w = r.freqs["none"][r.pair]
        for key, curve in self.angle_curves.items():
            curve.setData(r.positions, r.positions * r.freqs[key][r.pair])
        self.seen_band.setRegion((0.0, s.trained * w))
        self.trained_line.setPos(s.trained)
        self.angle_plot.setTitle(
            f"Pair {r.pair}'s angle over the target context "
            f"(band: seen in training{', all of it' if r.turned[r.pair] else ''})"
        )
        with quiet(self.pair_spin):  # a narrower width clamps the pair; no recompute
            self.pair_spin.setMaximum(half - 1)
        set_quietly(self.pair_spin, r.pair)
        self.summary.setText(self._summary(r))
        self.formula.setText(extension_formula(s))
        return None

    @staticmethod
    def _summary(r: ExtensionResult) -> str:
        lines = []
        for key, (name, _color) in METHODS.items():
            bad = r.unseen[key]
            worst = f", up to {num(r.overshoot[key][bad].max(), 2)}×" if bad.any() else ""
            lines.append(f"{name}: {int(bad.sum())} pairs past{worst}")
        return "Pairs past the angles seen in training:\n" + "\n".join(lines)
