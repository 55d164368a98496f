"""Panel "Position": attention cannot see word order until positions are encoded; sinusoidal
encodings, a learned table that runs out, RoPE's clock hands, and RoPE past the trained length."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QEasingCurve, Qt, QVariantAnimation
from PySide6.QtWidgets import (
    QComboBox,
    QDoubleSpinBox,
    QFormLayout,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QSpinBox,
    QStackedWidget,
    QVBoxLayout,
    QWidget,
)

from app.panels.base import Panel
from app.widgets import Heatmap, LabelledSlider
from app.widgets.clock_hands import ClockHands
from core import positional as pos
from core.explain import num

ORDER_WIDTH = 8  # embedding width of the word-order demo
MAX_WORDS = 32
HEATMAP_ROWS = 512  # longer sequences are shown as this many evenly spaced positions
CURVE_POSITIONS = 64
MAX_OFFSET = 128
TABLE_WIDTH = 16
MAX_TABLE_ROWS = 100_000
MAX_DIALS = 16
SCORE_OFFSETS = 48
ANIMATION_MS = 200
QUERY_COLOR, KEY_COLOR = "#d95f02", "#1b9e77"
CURVE_COLORS = ("#d62728", "#1f77b4", "#2ca02c", "#9467bd")
METHODS = {
    "none": ("plain RoPE", "#d62728"),
    "interpolation": ("position interpolation", "#1f77b4"),
    "ntk": ("NTK-aware", "#9467bd"),
    "yarn": ("YaRN", "#2ca02c"),
}
Notice = tuple[str, str] | None  # (text, level) shown in the panel's message bar


def _note(text: str = "") -> QLabel:
    label = QLabel(text)
    label.setWordWrap(True)
    return label


def _spin(value: int, minimum: int, maximum: int, step: int = 1) -> QSpinBox:
    spin = QSpinBox()
    spin.setRange(minimum, maximum)
    spin.setSingleStep(step)
    spin.setGroupSeparatorShown(True)
    spin.setKeyboardTracking(False)  # recompute when typing is done, not at every digit
    spin.setValue(value)
    return spin


def _base_spin(value: float) -> QDoubleSpinBox:
    spin = QDoubleSpinBox()
    spin.setRange(-1e6, 1e9)
    spin.setDecimals(1)
    spin.setKeyboardTracking(False)
    spin.setValue(value)
    return spin


def _plot(title: str, x: str, y: str) -> pg.PlotWidget:
    plot = pg.PlotWidget(title=title)
    plot.setLabel("bottom", x)
    plot.setLabel("left", y)
    plot.showGrid(x=True, y=True, alpha=0.25)
    plot.setMenuEnabled(False)
    return plot


def _set_quietly(widget, value) -> None:
    widget.blockSignals(True)
    widget.setValue(value)
    widget.blockSignals(False)


class Page(QWidget):
    """One step: its own settings, one core computation, then the existing views follow.

    Subclasses give ``compute(state)`` (may raise ValueError) and ``draw(result) -> Notice``.
    """

    def __init__(self, state, report: Callable[[Notice], None]):
        super().__init__()
        self.state, self.report, self.notice = state, report, None

    def compute(self, state):
        raise NotImplementedError

    def draw(self, result) -> Notice:
        raise NotImplementedError

    def apply(self, **change) -> bool:
        """Try the changed settings; on bad input say why and keep what is on screen."""
        candidate = replace(self.state, **change)
        try:
            result = self.compute(candidate)
        except ValueError as exc:
            self.report((str(exc), "error"))
            return False
        self.state = candidate
        self.notice = self.draw(result)
        self.report(self.notice)
        return True

    def layout_with(
        self, intro: str, controls: QFormLayout, view: QWidget, notes: tuple[QLabel, ...] = ()
    ) -> None:
        """Intro text on top; the controls, then ``notes``, on the left; the views on the right."""
        column = QVBoxLayout()
        column.addLayout(controls)
        for note in notes:
            column.addWidget(note)
        column.addStretch(1)
        left = QWidget()
        left.setLayout(column)
        left.setMaximumWidth(330)
        row = QHBoxLayout()
        row.addWidget(left)
        row.addWidget(view, 1)
        page = QVBoxLayout(self)
        page.addWidget(_note(intro))
        page.addLayout(row, 1)


# --- 1. word order ------------------------------------------------------------------------------
@dataclass(frozen=True)
class OrderState:
    sentence_a: str = "dog bites man"
    sentence_b: str = "man bites dog"
    encoding: str = "none"


ENCODING_NAMES = {
    "none": "none",
    "sinusoidal": "sinusoidal, added to embeddings",
    "rope": "RoPE, turns queries and keys",
}


class OrderPage(Page):
    def __init__(self, report):
        super().__init__(OrderState(), report)
        s = self.state
        self.edit_a, self.edit_b = QLineEdit(s.sentence_a), QLineEdit(s.sentence_b)
        self.encoding = QComboBox()
        for key, name in ENCODING_NAMES.items():
            self.encoding.addItem(name, key)
        self.summary = _note()
        controls = QFormLayout()
        controls.addRow("Sentence A", self.edit_a)
        controls.addRow("Sentence B", self.edit_b)
        controls.addRow("Position", self.encoding)
        self.map_a = Heatmap("Sentence A: weights", colorbar=False)
        self.map_b = Heatmap("Sentence B: weights")
        self.links = pg.PlotWidget(title="Where each word went")
        self.links.hideAxis("left")
        self.links.showAxis("top")
        self.links.setMouseEnabled(x=False, y=False)
        self.links.setMenuEnabled(False)
        self.links.hideButtons()
        self.links.setYRange(-0.05, 1.05, padding=0)
        self.link_lines = self.links.plot(pen=pg.mkPen("#888888", width=2), connect="pairs")
        self.link_lines.setSymbol("o")
        views = QHBoxLayout()
        for view, stretch in ((self.map_a, 3), (self.links, 2), (self.map_b, 3)):
            views.addWidget(view, stretch)
        holder = QWidget()
        holder.setLayout(views)
        self.layout_with(
            "The same words in two orders, with the same embeddings and projections. Without "
            "position information each word keeps its weights on each partner; they are only "
            "listed in another order. Choose an encoding to break the tie.",
            controls,
            holder,
            (self.summary,),
        )
        self.edit_a.textChanged.connect(lambda t: self.apply(sentence_a=t))
        self.edit_b.textChanged.connect(lambda t: self.apply(sentence_b=t))
        self.encoding.currentIndexChanged.connect(lambda i: self.apply(encoding=self.encoding.itemData(i)))

    def compute(self, state: OrderState) -> pos.PermutationTrace:
        if len(state.sentence_a.split()) > MAX_WORDS:
            raise ValueError(f"Use at most {MAX_WORDS} words so the weights stay readable.")
        rng = np.random.default_rng(0)
        return pos.permutation_attention(state.sentence_a, state.sentence_b, ORDER_WIDTH, rng, state.encoding)

    def draw(self, t: pos.PermutationTrace) -> Notice:
        self.trace = t
        self.map_a.set_data(t.a.weights, t.words_a, t.words_a, levels=(0.0, 1.0))
        self.map_b.set_data(t.b.weights, t.words_b, t.words_b, levels=(0.0, 1.0))
        n = len(t.words_a)
        self.links.getAxis("top").setTicks([list(enumerate(t.words_a))])
        self.links.getAxis("bottom").setTicks([list(enumerate(t.words_b))])
        x = np.column_stack([np.arange(n), t.where_in_b]).ravel().astype(float)
        y = np.tile([1.0, 0.0], n)
        self.link_lines.setData(x, y)
        self.links.setXRange(-0.5, n - 0.5, padding=0)
        same = t.difference < 1e-9
        self.summary.setText(
            f"Largest difference between A's weights and B's weights put back in A's order: "
            f"{t.difference:.1e}. "
            + (
                "The order is invisible: each word attends to each partner exactly as before."
                if same
                else "The order now changes what each word attends to."
            )
        )
        return None


# --- 2. sinusoidal -----------------------------------------------------------------------------
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
        self.n_spin = _spin(s.n, 0, 100_000_000)
        self.d_spin = _spin(s.d, 0, 1024, step=2)
        self.base_spin = _base_spin(s.base)
        controls = QFormLayout()
        controls.addRow("Positions n", self.n_spin)
        controls.addRow("Width d", self.d_spin)
        controls.addRow("Base", self.base_spin)
        self.heatmap = Heatmap(
            "Encoding: position × dimension", signed=True, cell_text=False, square_cells=False, max_ticks=8
        )
        self.heatmap.set_describer(self._describe)
        self.curves_plot = _plot("A few dimensions along the sequence", "position p", "sin(p·ωᵢ)")
        self.curves = [self.curves_plot.plot(pen=pg.mkPen(c, width=2)) for c in CURVE_COLORS]
        self.curve_key = _note()
        self.dot_plot = _plot("PE(p)·PE(p + k), the same for every p", "offset k", "dot product")
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


# --- 3. learned table --------------------------------------------------------------------------
@dataclass(frozen=True)
class TableState:
    rows: int = 1024
    length: int = 1024


@dataclass(frozen=True)
class TableResult:
    table: pos.LearnedTable
    vectors: np.ndarray  # (covered, TABLE_WIDTH) the rows the sequence gets
    missing: pos.PositionOutOfRange | None
    length: int


class TablePage(Page):
    def __init__(self, report):
        super().__init__(TableState(), report)
        s = self.state
        self.rows_spin = _spin(s.rows, 0, MAX_TABLE_ROWS)
        self.length_spin = _spin(s.length, 0, 10_000_000)
        controls = QFormLayout()
        controls.addRow("Table rows", self.rows_spin)
        controls.addRow("Sequence length", self.length_spin)
        self.heatmap = Heatmap(
            "Vectors the sequence gets", signed=True, cell_text=False, square_cells=False, max_ticks=8
        )
        self.coverage = _plot("Positions with a vector", "position (counting from 1)", "")
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
        holder = QWidget()
        holder.setLayout(views)
        self.layout_with(
            "A learned table stores one vector per position (GPT-2: 1,024 rows). The vectors here "
            "are random, as before training; what matters is that the table has an end.",
            controls,
            holder,
        )
        self.rows_spin.valueChanged.connect(lambda v: self.apply(rows=v))
        self.length_spin.valueChanged.connect(lambda v: self.apply(length=v))

    def compute(self, s: TableState) -> TableResult:
        table = pos.learned_table(s.rows, TABLE_WIDTH, np.random.default_rng(0))
        try:
            return TableResult(table, table.embed(s.length), None, s.length)
        except pos.PositionOutOfRange as missing:
            return TableResult(table, table.embed(table.rows), missing, s.length)

    def draw(self, r: TableResult) -> Notice:
        self.result = r
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


# --- 4. RoPE -----------------------------------------------------------------------------------
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
        self.d_spin = _spin(s.d, 0, 256, step=2)
        self.base_spin = _base_spin(s.base)
        self.seed_spin = _spin(s.seed, 0, 2**31 - 1)
        self.m_slider = LabelledSlider("Query m", 0, 64, s.m, integer=True)
        self.n_slider = LabelledSlider("Key n", 0, 64, s.n, integer=True)
        self.shift_slider = LabelledSlider("Move both", 0, 10_000, s.shift, integer=True)
        self.readout = _note()
        controls = QFormLayout()
        controls.addRow("Width d", self.d_spin)
        controls.addRow("Base", self.base_spin)
        controls.addRow("q, k seed", self.seed_spin)
        controls.addRow(self.m_slider)
        controls.addRow(self.n_slider)
        controls.addRow(self.shift_slider)
        self.clocks = ClockHands(("query q", "key k"), (QUERY_COLOR, KEY_COLOR))
        self.score_plot = _plot("Score after rotation against the offset", "m − n", "q·k")
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
            self.clocks.set_dials([f"pair {i}\nω = {r.freqs[i]:.3g}" for i in r.pairs])
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


# --- 5. past the trained length ----------------------------------------------------------------
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
        self.d_spin = _spin(s.d, 0, 1024, step=2)
        self.base_spin = _base_spin(s.base)
        self.trained_spin = _spin(s.trained, 0, 10_000_000)
        self.target_spin = _spin(s.target, 0, 100_000_000)
        self.pair_spin = _spin(s.pair, 0, s.d // 2 - 1)
        self.method_box = QComboBox()
        for key, (name, _color) in METHODS.items():
            self.method_box.addItem(name, key)
        self.method_box.setCurrentIndex(list(METHODS).index(s.method))
        self.summary = _note()
        self.formula = _note()
        controls = QFormLayout()
        controls.addRow("Width d", self.d_spin)
        controls.addRow("Base", self.base_spin)
        controls.addRow("Trained length L", self.trained_spin)
        controls.addRow("Target length L′", self.target_spin)
        controls.addRow("Method", self.method_box)
        controls.addRow("Pair to follow", self.pair_spin)
        self.over_plot = _plot(
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
            pen=None, symbol="o", symbolSize=11, symbolPen=pg.mkPen("#000", width=1.5), symbolBrush=None
        )
        self.angle_plot = _plot("Angle of one pair along the target context", "position", "θ (rad)")
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
        _set_quietly(self.pair_spin, r.pair)
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


# --- the panel ---------------------------------------------------------------------------------
class PositionPanel(Panel):
    key = "position"
    title = "Position"
    steps = (
        "Word order is invisible",
        "Sinusoidal encoding",
        "Learned table",
        "RoPE clock hands",
        "Past the trained length",
    )

    def __init__(self, parent=None):
        super().__init__(parent)
        self.order = OrderPage(self._report)
        self.sinusoidal = SinusoidalPage(self._report)
        self.table = TablePage(self._report)
        self.rope = RopePage(self._report)
        self.extension = ExtensionPage(self._report)
        self.pages = QStackedWidget()
        for page in self._pages():
            self.pages.addWidget(page)
            page.apply()
        self.body.addWidget(self.pages)
        self.set_step(0)

    def _pages(self) -> tuple[Page, ...]:
        return (self.order, self.sinusoidal, self.table, self.rope, self.extension)

    def _report(self, notice: Notice) -> None:
        if notice is None:
            self.clear_message()
        else:
            self.show_message(*notice)

    def show_step(self, i: int) -> None:
        self.pages.setCurrentIndex(i)
        self._report(self._pages()[i].notice)

    def exercise(self) -> None:
        o, s, t, r, e = self._pages()
        o.edit_b.setText("cat bites dog")
        o.edit_b.setText("man bites dog")
        for i in range(o.encoding.count()):
            o.encoding.setCurrentIndex(i)
        o.encoding.setCurrentIndex(0)
        for spin, values in (
            (s.n_spin, (0, 1, 1_000_000, 128)),
            (s.d_spin, (7, 0, 512, 64)),
            (s.base_spin, (0.0, -5.0, 10_000.0)),
            (t.length_spin, (0, 1500, 1024)),
            (t.rows_spin, (0, 1024)),
            (r.d_spin, (7, 64, 8)),
            (r.base_spin, (0.0, 10_000.0)),
            (e.d_spin, (9, 64, 128)),
            (e.trained_spin, (0, 40_000, 4096)),
            (e.target_spin, (0, 4096, 100_000_000, 32768)),
            (e.pair_spin, (0, 63)),
        ):
            for value in values:
                spin.setValue(value)
        for i in range(e.method_box.count()):
            e.method_box.setCurrentIndex(i)
        for slider, value in ((r.m_slider, 64), (r.n_slider, 40), (r.shift_slider, 10_000)):
            slider.setValue(value)
        super().exercise()
        t.length_spin.setValue(1500)
        r.m_slider.setValue(9)
        r.n_slider.setValue(3)
        r.shift_slider.setValue(0)
        r.finish_animation()
        self.set_step(3)

    def export(self) -> dict[str, QWidget]:
        return {
            "order-a": self.order.map_a,
            "order-b": self.order.map_b,
            "sinusoidal": self.sinusoidal.heatmap,
            "table": self.table.heatmap,
            "rope-hands": self.rope.clocks,
            "rope-score": self.rope.score_plot,
            "extension": self.extension.over_plot,
        }
