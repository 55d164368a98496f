"""Step 5: RoPE past the trained length, with interpolation, NTK-aware and YaRN scaling."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QComboBox, QFormLayout, QVBoxLayout, QWidget

from app.panels.position_steps.page import Notice, Page, base_spin, plot, spin
from app.widgets.controls import note, set_quietly
from core import positional as pos
from core.explain import num

METHODS = {
    "none": ("plain RoPE", "#d62728"),
    "interpolation": ("position interpolation", "#1f77b4"),
    "ntk": ("NTK-aware", "#9467bd"),
    "yarn": ("YaRN", "#2ca02c"),
}


@dataclass(frozen=True)
class ExtensionState:
    d: int = 128
    base: float = pos.ROPE_BASE
    trained: int = 4096
    target: int = 32768
    pair: int = 63
    method: str = "yarn"


@dataclass(frozen=True)
class ExtensionResult:
    freqs: dict[str, np.ndarray]  # method -> (d/2,)
    overshoot: dict[str, np.ndarray]  # method -> (d/2,)
    unseen: dict[str, np.ndarray]  # method -> (d/2,) bool
    turned: np.ndarray  # (d/2,) bool: the pair made a full turn in training
    pair: int
    positions: np.ndarray  # (p,) along the target context


class ExtensionPage(Page):
    def __init__(self, report):
        super().__init__(ExtensionState(), report)
        s = self.state
        self.d_spin = spin(s.d, 0, 1024, step=2)
        self.base_spin = base_spin(s.base)
        self.trained_spin = spin(s.trained, 0, 10_000_000)
        self.target_spin = spin(s.target, 0, 100_000_000)
        self.pair_spin = spin(s.pair, 0, s.d // 2 - 1)
        self.method_box = QComboBox()
        for key, (name, _color) in METHODS.items():
            self.method_box.addItem(name, key)
        self.method_box.setCurrentIndex(list(METHODS).index(s.method))
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
        self.over_plot.addLegend(offset=(-10, 50))
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
        self.angle_plot = plot("Angle of one pair along the target context", "position", "θ (rad)")
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
        holder = QWidget()
        holder.setLayout(views)
        self.layout_with(
            "A model trained on L positions has met only the angles those positions produce. Pairs "
            "in the grey band made a full turn in training, so every angle is familiar; any other "
            "pair above 1 points where training never went (circled for the chosen method).",
            controls,
            holder,
            (self.formula, self.summary),
        )
        self.d_spin.valueChanged.connect(lambda v: self.apply(d=v))
        self.base_spin.valueChanged.connect(lambda v: self.apply(base=v))
        self.trained_spin.valueChanged.connect(lambda v: self.apply(trained=v))
        self.target_spin.valueChanged.connect(lambda v: self.apply(target=v))
        self.pair_spin.valueChanged.connect(lambda v: self.apply(pair=v))
        self.method_box.currentIndexChanged.connect(lambda i: self.apply(method=self.method_box.itemData(i)))

    def compute(self, s: ExtensionState) -> ExtensionResult:
        w = pos.frequencies(s.d, s.base)
        freqs = {m: pos.extended_frequencies(m, s.d, s.base, s.trained, s.target) for m in METHODS}
        over = {m: pos.overshoot(f, w, s.trained, s.target) for m, f in freqs.items()}
        unseen = {m: pos.unseen_pairs(f, w, s.trained, s.target) for m, f in freqs.items()}
        turned = s.trained * w >= 2 * np.pi
        positions = np.linspace(0, s.target - 1, 400)
        return ExtensionResult(freqs, over, unseen, turned, min(s.pair, s.d // 2 - 1), positions)

    def draw(self, r: ExtensionResult) -> Notice:
        self.result = r
        s = self.state
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
            f"Angle of pair {r.pair} along the target context "
            f"(band: angles seen in training{', all of them' if r.turned[r.pair] else ''})"
        )
        self.pair_spin.setMaximum(half - 1)
        set_quietly(self.pair_spin, r.pair)
        self.summary.setText(self._summary(r))
        self.formula.setText(self._formula(s))
        return None

    @staticmethod
    def _summary(r: ExtensionResult) -> str:
        lines = []
        for key, (name, _color) in METHODS.items():
            bad = r.unseen[key]
            worst = f", up to {num(r.overshoot[key][bad].max(), 2)}×" if bad.any() else ""
            lines.append(f"{name}: {int(bad.sum())} pairs past{worst}")
        return "Pairs past the angles seen in training:\n" + "\n".join(lines)

    @staticmethod
    def _formula(s: ExtensionState) -> str:
        scale = pos.stretch(s.trained, s.target)
        head = f"s = L′/L = {s.target:,}/{s.trained:,} = {num(scale, 3)}\n"
        if s.method == "none":
            return head + "θᵢ(p) = p·ωᵢ, ωᵢ = base^(−2i/d): unchanged"
        if s.method == "interpolation":
            return head + "θᵢ(p) = (p/s)·ωᵢ: every position squeezed into [0, L)"
        if s.method == "ntk":
            b = pos.ntk_base(s.base, s.d, s.trained, s.target)
            return head + (f"base′ = base·s^(d/(d−2)) = {num(b, 0)}\nθᵢ(p) = p·base′^(−2i/d)")
        factor = pos.yarn_attention_factor(s.trained, s.target)
        return head + (
            "rᵢ = L·ωᵢ/2π full turns in training\n"
            f"γᵢ = clip((rᵢ − {pos.YARN_ALPHA:g})/({pos.YARN_BETA:g} − {pos.YARN_ALPHA:g}), 0, 1)\n"
            "ω′ᵢ = (1 − γᵢ)·ωᵢ/s + γᵢ·ωᵢ\n"
            f"scores × (0.1·ln s + 1)² = {num(factor, 3)}"
        )
