"""Step 4: RoPE as clock hands that turn (animated) with the query's and key's positions."""

from __future__ import annotations

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QEasingCurve, QVariantAnimation
from PySide6.QtWidgets import QFormLayout, QVBoxLayout, QWidget

from app.panels.position import scripts
from app.panels.position.state import RopeResult, RopeState, compute_rope
from app.panels.scripts import Script
from app.panels.step import Live, Notice, Step
from app.widgets import LabelledSlider
from app.widgets.clock_hands import ClockHands
from app.widgets.plots import plot
from app.widgets.spin_boxes import float_spin, spin
from app.widgets.text import note
from core.maths import positional as pos
from core.maths.explain import num

ANIMATION_MS = 200
QUERY_COLOR, KEY_COLOR = "#d95f02", "#1b9e77"


class RopePage(Step):
    def __init__(self):
        super().__init__(Live(RopeState(), compute_rope))
        s = self.state
        self.drawn: RopeResult | None = None  # the result on screen, to redraw only what moved
        self.d_spin = self.bind(spin(s.d, 0, 256, step=2), "d")
        self.base_spin = self.bind(float_spin(s.base, -1e6, 1e9), "base")
        self.seed_spin = self.bind(spin(s.seed, 0, 2**31 - 1), "seed")
        self.m_slider = self.bind(LabelledSlider("Query m", 0, 64, s.m, integer=True), "m", int)
        self.n_slider = self.bind(LabelledSlider("Key n", 0, 64, s.n, integer=True), "n", int)
        self.shift_slider = self.bind(
            LabelledSlider("Move both", 0, 10_000, s.shift, integer=True), "shift", int
        )
        self.readout = note()
        controls = QFormLayout()
        controls.addRow("Width d", self.d_spin)
        controls.addRow("Base", self.base_spin)
        controls.addRow("q, k seed", self.seed_spin)
        controls.addRow(self.m_slider)
        controls.addRow(self.n_slider)
        controls.addRow(self.shift_slider)
        self.clocks = ClockHands(("query q", "key k"), (QUERY_COLOR, KEY_COLOR))
        self.score_plot = plot("Score after rotation against the offset", "m − n", "q·k", grid=False)
        # (no grid: it would repaint on every drag step)
        self.score_curve = self.score_plot.plot(pen=pg.mkPen("#1f77b4", width=2))
        self.score_now = pg.ScatterPlotItem(size=12, brush=QUERY_COLOR, pen=None)
        self.score_plot.addItem(self.score_now)
        views = QVBoxLayout()
        views.addWidget(self.clocks, 3)
        views.addWidget(self.score_plot, 2)
        self.layout_with(
            "Each pair of dimensions is a clock hand, turned by position × its speed ωᵢ: early "
            "pairs are fast hands, late pairs slow ones. The score only sees the angle between "
            "the query's and the key's hands, so only the offset m − n matters.",
            controls,
            views,
            (self.readout,),
        )
        self.shown = (float(s.m), float(s.n))  # positions the hands are drawn at
        self.start = self.target = self.shown  # the running animation goes from start to target
        self.animation = QVariantAnimation(self)
        self.animation.setDuration(ANIMATION_MS)
        self.animation.setStartValue(0.0)
        self.animation.setEndValue(1.0)
        self.animation.setEasingCurve(QEasingCurve.Type.OutCubic)
        self.animation.valueChanged.connect(self._frame)

    def views(self) -> dict[str, QWidget]:
        return {"rope_hands": self.clocks, "rope_score": self.score_plot}

    def script(self) -> Script:
        return scripts.rope(self.state)

    def draw(self, r: RopeResult) -> Notice:
        old, self.drawn = self.drawn, r
        relaid = old is None or old.freqs.shape != r.freqs.shape or np.any(old.freqs != r.freqs)
        if relaid:
            self.clocks.set_dials([f"pair {i}\nω = {r.freqs[i]:.2g}" for i in r.pairs])
        if old is None or not np.array_equal(old.by_offset, r.by_offset):  # only q, k, d, base move it
            self.score_curve.setData(r.offsets, r.by_offset)
        self.score_now.setData([r.m - r.n], [r.score])
        gap = abs(r.score - r.at_start)
        self.readout.setText(
            f"q·k after rotation at m = {r.m:,.0f}, n = {r.n:,.0f}: {num(r.score, 6)}\n"
            f"Same offset {r.m - r.n:+.0f} starting at position 0: {num(r.at_start, 6)}\n"
            f"Difference: {gap:.1e} ({'below' if gap < 1e-9 else 'ABOVE'} 10⁻⁹)"
        )
        self.animation.stop()
        self.start, self.target = self.shown, (r.m, r.n)
        if relaid or self.target == self.shown:
            self.show_positions(r.m, r.n)
        else:
            self.animation.start()
        return None

    def _frame(self, t: float) -> None:
        (m0, n0), (m1, n1) = self.start, self.target
        self.show_positions(m0 + t * (m1 - m0), n0 + t * (n1 - n0))

    def show_positions(self, m: float, n: float) -> None:
        """Draw the hands with the query at position m and the key at position n."""
        r = self.drawn
        hands = []
        for vector, p in ((r.q, m), (r.k, n)):
            turned = pos.rope(vector, p, r.base).reshape(-1, 2)  # (d/2, 2)
            hands.append(turned[r.pairs])
        self.clocks.set_hands(hands)
        self.shown = (m, n)

    def finish_animation(self) -> None:
        """Jump to the end of a running animation (tests and screenshots)."""
        if self.animation.state() == QVariantAnimation.State.Running:
            self.animation.stop()
            self.show_positions(*self.target)
