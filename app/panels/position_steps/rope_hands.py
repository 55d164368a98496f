"""Step 4: RoPE as clock hands that turn (animated) with the query's and key's positions."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QEasingCurve, QVariantAnimation
from PySide6.QtWidgets import QFormLayout, QVBoxLayout, QWidget

from app.panels.position_steps.page import Notice, Page, base_spin, plot, spin
from app.widgets import LabelledSlider
from app.widgets.clock_hands import ClockHands
from app.widgets.controls import note
from core import positional as pos
from core.explain import num

MAX_DIALS = 16
SCORE_OFFSETS = 48
ANIMATION_MS = 200
QUERY_COLOR, KEY_COLOR = "#d95f02", "#1b9e77"


@dataclass(frozen=True)
class RopeState:
    d: int = 8
    base: float = pos.ROPE_BASE
    m: int = 5
    n: int = 2
    shift: int = 0
    seed: int = 0


@dataclass(frozen=True)
class RopeResult:
    q: np.ndarray  # (d,)
    k: np.ndarray  # (d,)
    pairs: np.ndarray  # (dials,) pair index drawn on each dial
    freqs: np.ndarray  # (d/2,)
    m: float  # query position including the shift
    n: float  # key position including the shift
    score: float  # rope(q, m)·rope(k, n)
    at_start: float  # the same offset with the earlier token at position 0
    offsets: np.ndarray  # (o,)
    by_offset: np.ndarray  # (o,) score as a function of m − n


class RopePage(Page):
    def __init__(self, report):
        super().__init__(RopeState(), report)
        s = self.state
        self.d_spin = spin(s.d, 0, 256, step=2)
        self.base_spin = base_spin(s.base)
        self.seed_spin = spin(s.seed, 0, 2**31 - 1)
        self.m_slider = LabelledSlider("Query m", 0, 64, s.m, integer=True)
        self.n_slider = LabelledSlider("Key n", 0, 64, s.n, integer=True)
        self.shift_slider = LabelledSlider("Move both", 0, 10_000, s.shift, integer=True)
        self.readout = note()
        controls = QFormLayout()
        controls.addRow("Width d", self.d_spin)
        controls.addRow("Base", self.base_spin)
        controls.addRow("q, k seed", self.seed_spin)
        controls.addRow(self.m_slider)
        controls.addRow(self.n_slider)
        controls.addRow(self.shift_slider)
        self.clocks = ClockHands(("query q", "key k"), (QUERY_COLOR, KEY_COLOR))
        self.score_plot = plot("Score after rotation against the offset", "m − n", "q·k")
        self.score_plot.showGrid(x=False, y=False)  # its grid would repaint on every drag step
        self.score_curve = self.score_plot.plot(pen=pg.mkPen("#1f77b4", width=2))
        self.score_now = pg.ScatterPlotItem(size=12, brush=QUERY_COLOR, pen=None)
        self.score_plot.addItem(self.score_now)
        views = QVBoxLayout()
        views.addWidget(self.clocks, 3)
        views.addWidget(self.score_plot, 2)
        holder = QWidget()
        holder.setLayout(views)
        self.layout_with(
            "Each pair of dimensions is a clock hand, turned by position × its speed ωᵢ: early "
            "pairs are fast hands, late pairs slow ones. The score only sees the angle between "
            "the query's and the key's hands, so only the offset m − n matters.",
            controls,
            holder,
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
        self.d_spin.valueChanged.connect(lambda v: self.apply(d=v))
        self.base_spin.valueChanged.connect(lambda v: self.apply(base=v))
        self.seed_spin.valueChanged.connect(lambda v: self.apply(seed=v))
        self.m_slider.valueChanged.connect(lambda v: self.apply(m=int(v)))
        self.n_slider.valueChanged.connect(lambda v: self.apply(n=int(v)))
        self.shift_slider.valueChanged.connect(lambda v: self.apply(shift=int(v)))

    def compute(self, s: RopeState) -> RopeResult:
        freqs = pos.frequencies(s.d, s.base)
        q, k = np.random.default_rng(s.seed).normal(size=(2, s.d))
        pairs = np.unique(np.round(np.linspace(0, s.d // 2 - 1, min(s.d // 2, MAX_DIALS))))
        m, n = s.m + s.shift, s.n + s.shift
        score = float(pos.rope_score(q, k, m, n, s.base))
        first = min(s.m, s.n)
        at_start = float(pos.rope_score(q, k, s.m - first, s.n - first, s.base))
        offsets = np.arange(-SCORE_OFFSETS, SCORE_OFFSETS + 1)
        by_offset = pos.rope_score(q, k, SCORE_OFFSETS + offsets, SCORE_OFFSETS, s.base)
        return RopeResult(q, k, pairs.astype(int), freqs, m, n, score, at_start, offsets, by_offset)

    def draw(self, r: RopeResult) -> Notice:
        old = getattr(self, "result", None)
        self.result = r
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
        r, s = self.result, self.state
        hands = []
        for vector, p in ((r.q, m), (r.k, n)):
            turned = pos.rope(vector, p, s.base).reshape(-1, 2)  # (d/2, 2)
            hands.append(turned[r.pairs])
        self.clocks.set_hands(hands)
        self.shown = (m, n)

    def finish_animation(self) -> None:
        """Jump to the end of a running animation (tests and screenshots)."""
        if self.animation.state() == QVariantAnimation.State.Running:
            self.animation.stop()
            self.show_positions(*self.target)
