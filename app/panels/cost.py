"""Panel "Cost and FlashAttention": the O(n²) wall, and how tiling gets around the memory part.

Four pages, one per lecture step: a cost calculator (FLOPs and score-matrix memory against n),
the handshake picture, FlashAttention's online softmax tile by tile, and the cost of sliding-window
and sparse patterns. Every number comes from core.complexity, core.flash and core.masks.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QAbstractItemView,
    QAbstractScrollArea,
    QCheckBox,
    QComboBox,
    QFormLayout,
    QHBoxLayout,
    QHeaderView,
    QPushButton,
    QSlider,
    QSpinBox,
    QStackedWidget,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from app.panels.base import Panel
from app.widgets import Heatmap, LabelledSlider, MatrixView
from app.widgets.colors import default_levels
from app.widgets.controls import note
from core.attention import attend
from core.complexity import (
    DTYPE_BYTES,
    MEMORY_SIZES,
    MIB,
    AttentionCost,
    attention_cost,
    first_length_exceeding,
    handshake_pairs,
    handshakes,
    loglog_slope,
    pattern_cells,
    tiled_memory,
)
from core.flash import tiled_attention
from core.masks import causal as causal_mask
from core.masks import global_local

N_MIN, N_MAX = 128, 2**20
N_GRID = np.unique(np.round(np.logspace(np.log10(N_MIN), np.log10(N_MAX), 61)).astype(int)).tolist()
ARTICLE_LENGTHS = (128, 512, 1_024, 4_096, 16_384, 65_536)  # the rows of the second article's table
PATTERN_PICTURE_N = 48  # tokens in the small picture of the sparse pattern
COLORS = ("#0072b2", "#d55e00", "#009e73", "#cc79a7", "#e69f00", "#56b4e9")  # Okabe–Ito
UNITS = ("B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB")


def size_text(n_bytes: int) -> str:
    """Bytes in binary units with three significant digits: 67108864 → "64 MiB"."""
    value, unit = float(n_bytes), 0
    while value >= 1024 and unit < len(UNITS) - 1:
        value, unit = value / 1024, unit + 1
    return f"{value:.3g} {UNITS[unit]}"


def mib_text(n_bytes: int) -> str:
    """MiB as in the article's table, but exact below 1 MiB (0.0625 rather than 0.1)."""
    value = n_bytes / MIB
    return f"{value:,.1f}" if value >= 1 else f"{value:.4g}"


def percent(part: int, whole: int) -> str:
    """part / whole as a percentage with three significant digits: "0.391 %"."""
    return f"{100 * part / whole:.3g} %"


def _spin(value: int, minimum: int, maximum: int) -> QSpinBox:
    spin = QSpinBox()
    spin.setRange(minimum, maximum)
    spin.setValue(value)
    spin.setGroupSeparatorShown(True)
    return spin


def _loglog_plot(title: str, y_label: str, legend_at=(-8, -8)) -> pg.PlotWidget:
    """A log-log plot against n; ``legend_at`` is the legend offset (negative: from right or bottom)."""
    plot = pg.PlotWidget(title=title)
    plot.setLogMode(x=True, y=True)
    plot.showGrid(x=True, y=True, alpha=0.25)
    plot.setLabel("bottom", "sequence length n (tokens)")
    plot.setLabel("left", y_label)
    for side in ("left", "bottom"):
        plot.getAxis(side).enableAutoSIPrefix(False)
    plot.setMenuEnabled(False)
    plot.addLegend(offset=legend_at)
    return plot


def _curve(plot: pg.PlotWidget, name: str, color: str, style=Qt.PenStyle.SolidLine) -> pg.PlotDataItem:
    return plot.plot([], [], name=name, pen=pg.mkPen(color, width=2.5, style=style))


def _slope_label(plot: pg.PlotWidget, color: str, anchor=(0, 1)) -> pg.TextItem:
    """A text item for a curve's slope; anchor (0, 1) puts it above and right of its point."""
    label = pg.TextItem(color=color, anchor=anchor)
    plot.addItem(label)
    return label


def _place_slope(label: pg.TextItem, x: list[int], y: list[int], at: int) -> None:
    """Write the local log-log slope of (x, y) at x = ``at`` beside the curve there."""
    k = x.index(at)
    slope = loglog_slope(x, y)[k]
    label.setText(f"slope {slope:.2f}")
    label.setPos(np.log10(at), np.log10(float(y[k])))


# --- 1. Cost calculator -----------------------------------------------------------------------------
@dataclass(frozen=True)
class CostSettings:
    n: int = 4_096
    d_model: int = 512
    heads: int = 1
    layers: int = 1
    batch: int = 1
    dtype: str = "fp32"
    causal: bool = False


class CalculatorPage(QWidget):
    """FLOPs and score-matrix memory of attention, live, with the article's table recomputed."""

    def __init__(self, panel: CostPanel):
        super().__init__()
        self.panel = panel
        self.settings = s = CostSettings()
        self.n_slider = LabelledSlider("n", N_MIN, N_MAX, s.n, log=True, integer=True)
        self.d_model_spin = _spin(s.d_model, 0, 65_536)
        self.heads_spin = _spin(s.heads, 0, 1_024)
        self.layers_spin = _spin(s.layers, 0, 1_000)
        self.batch_spin = _spin(s.batch, 0, 4_096)
        self.dtype_box = QComboBox()
        self.dtype_box.addItems(list(DTYPE_BYTES))
        self.causal_box = QCheckBox("causal (decoder)")
        self.article_button = QPushButton("Article's settings")
        self.article_button.setToolTip("d_model 512, one head, one layer, batch 1, fp32, not causal")
        form = QFormLayout()
        form.addRow(self.n_slider)
        form.addRow("d_model", self.d_model_spin)
        form.addRow("heads", self.heads_spin)
        form.addRow("layers", self.layers_spin)
        form.addRow("batch", self.batch_spin)
        form.addRow("dtype", self.dtype_box)
        form.addRow(self.causal_box)
        form.addRow(self.article_button)
        self.readout = note()
        controls = QVBoxLayout()
        controls.addLayout(form)
        controls.addWidget(self.readout)
        controls.addStretch(1)
        controls_box = QWidget()
        controls_box.setLayout(controls)
        controls_box.setMaximumWidth(360)

        self.flops_plot = _loglog_plot("FLOPs of attention (whole model)", "FLOPs")
        self.flops_curves = {
            "qkv": _curve(self.flops_plot, "projections", COLORS[0]),
            "quadratic": _curve(self.flops_plot, "n² terms", COLORS[1]),
            "article": _curve(self.flops_plot, "article total", COLORS[2]),
            "benchmark": _curve(self.flops_plot, "4·n²·d·h", COLORS[3], Qt.PenStyle.DashLine),
        }
        anchors = {"qkv": (1, 0), "quadratic": (1, 0), "article": (0, 0), "benchmark": (1, 1)}
        self.flops_slopes = {
            key: _slope_label(self.flops_plot, COLORS[k], anchors[key]) for k, key in enumerate(anchors)
        }
        self.memory_plot = _loglog_plot("Score matrices in memory", "bytes")
        self.memory_curves = {
            "head": _curve(self.memory_plot, "per head", COLORS[0]),
            "layer": _curve(self.memory_plot, "per layer", COLORS[2]),
            "model": _curve(self.memory_plot, "whole model", COLORS[1]),
        }
        self.memory_slope = _slope_label(self.memory_plot, COLORS[1], anchor=(0, 0))
        for k, (label, size) in enumerate(MEMORY_SIZES):
            line = pg.InfiniteLine(
                np.log10(size),
                angle=0,
                pen=pg.mkPen("#888888", style=Qt.PenStyle.DotLine),
                label=label,
                labelOpts={"position": 0.02 + 0.3 * (k % 2), "anchors": [(0, 1), (0, 1)], "color": "#888888"},
            )
            self.memory_plot.addItem(line)
        self.crossings = self.memory_plot.plot(
            [], [], pen=None, symbol="o", symbolSize=9, symbolBrush=COLORS[4], name="exceeds a memory"
        )
        self.n_lines = [pg.InfiniteLine(angle=90, pen=pg.mkPen("#888888")) for _ in range(2)]
        self.flops_plot.addItem(self.n_lines[0])
        self.memory_plot.addItem(self.n_lines[1])

        self.table_title = note()
        self.table = QTableWidget(len(ARTICLE_LENGTHS), 4)
        self.table.setHorizontalHeaderLabels(["n", "article FLOPs", "benchmark FLOPs", "MiB per head"])
        self.table.verticalHeader().hide()
        self.table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.table.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
        self.table.setVerticalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.table.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.table.setSizeAdjustPolicy(QAbstractScrollArea.SizeAdjustPolicy.AdjustToContents)

        plots = QHBoxLayout()
        plots.addWidget(self.flops_plot)
        plots.addWidget(self.memory_plot)
        right = QVBoxLayout()
        right.addLayout(plots, 3)
        right.addWidget(self.table_title)
        right.addWidget(self.table)
        row = QHBoxLayout(self)
        row.addWidget(controls_box)
        row.addLayout(right, 1)

        for spin in (self.d_model_spin, self.heads_spin, self.layers_spin, self.batch_spin):
            spin.valueChanged.connect(self.change)
        self.n_slider.valueChanged.connect(self.change)
        self.dtype_box.currentTextChanged.connect(self.change)
        self.causal_box.toggled.connect(self.change)
        self.article_button.clicked.connect(self.article_settings)
        self.recompute(self.settings)

    def change(self) -> None:
        """Recompute from what every control shows now."""
        self.recompute(
            CostSettings(
                int(self.n_slider.value()),
                self.d_model_spin.value(),
                self.heads_spin.value(),
                self.layers_spin.value(),
                self.batch_spin.value(),
                self.dtype_box.currentText(),
                self.causal_box.isChecked(),
            )
        )

    def _cost(self, s: CostSettings, n: int) -> AttentionCost:
        return attention_cost(n, s.d_model, s.heads, s.causal, layers=s.layers, batch=s.batch, dtype=s.dtype)

    def recompute(self, s: CostSettings) -> None:
        try:
            cost = self._cost(s, s.n)
        except ValueError as exc:
            self.panel.show_message(str(exc))
            return
        self.panel.clear_message()
        self.settings, self.cost = s, cost
        grid = sorted({*N_GRID, s.n})
        costs = [self._cost(s, n) for n in grid]
        per_copy = s.layers * s.batch
        flops = {
            "qkv": [c.qkv_flops * per_copy for c in costs],
            "quadratic": [c.quadratic_flops * per_copy for c in costs],
            "article": [c.article_flops_model for c in costs],
            "benchmark": [c.benchmark_flops_model for c in costs],
        }
        for key, values in flops.items():
            self.flops_curves[key].setData(grid, np.array(values, dtype=float))
            _place_slope(self.flops_slopes[key], grid, values, s.n if key == "article" else N_MAX)
        memory = {
            "head": [c.score_bytes_per_head for c in costs],
            "layer": [c.score_bytes_per_layer for c in costs],
            "model": [c.score_bytes_model for c in costs],
        }
        for key, values in memory.items():
            self.memory_curves[key].setData(grid, np.array(values, dtype=float))
        _place_slope(self.memory_slope, grid, memory["model"], s.n)
        self.crossing_n = [
            first_length_exceeding(size, cost.score_bytes_per_token_pair) for _, size in MEMORY_SIZES
        ]
        self.crossings.setData(
            self.crossing_n, [float(n * n * cost.score_bytes_per_token_pair) for n in self.crossing_n]
        )
        for line in self.n_lines:
            line.setValue(np.log10(s.n))
        self.readout.setText(self._readout(cost))
        self._fill_table(s)

    def _readout(self, c: AttentionCost) -> str:
        heads = "1 head" if c.heads == 1 else f"{c.heads} heads"
        lines = [
            f"<b>n = {c.n:,}</b> tokens, {heads} of width {c.d_head}, {c.layers} layer(s), "
            f"batch {c.batch}, {c.dtype}",
            "<b>One layer, the article's count</b> (multiply-adds):",
            f"&nbsp; projections 3·n·d_model² = {c.qkv_flops:,}",
            f"&nbsp; scores n²·d_model = {c.score_flops:,}",
            f"&nbsp; weighted sum n²·d_model = {c.weighted_sum_flops:,}",
            f"&nbsp; total = {c.article_flops:,} ({percent(c.quadratic_flops, c.article_flops)} quadratic)",
            f"<b>Benchmark count</b> 4·n²·d·h{' ÷ 2' if c.causal else ''} = {c.benchmark_flops:,} FLOPs",
        ]
        ratio = c.benchmark_flops / c.quadratic_flops
        why = (
            f"That is {ratio:g}× the article's quadratic part: a benchmark counts a multiply and an add "
            "as two FLOPs and leaves out the projections"
        )
        if c.causal:
            why += (
                "; with a causal mask a tiled kernel skips the hidden half, while a plain implementation "
                "(the article's count) computes every cell and hides half afterwards"
            )
        lines.append(why + ".")
        lines.append(
            f"<b>Whole model</b> ({c.layers} × batch {c.batch}): {c.article_flops_model:,} multiply-adds"
        )
        lines.append(
            f"<b>Score matrices</b>: {size_text(c.score_bytes_per_head)} per head, "
            f"{size_text(c.score_bytes_per_layer)} per layer, {size_text(c.score_bytes_model)} "
            "for the whole model"
        )
        passes = ", ".join(
            f"{label} at n = {n:,}" for (label, _), n in zip(MEMORY_SIZES, self.crossing_n, strict=True)
        )
        lines.append(f"The whole model's score matrices outgrow {passes}.")
        return "<br>".join(lines)

    def _fill_table(self, s: CostSettings) -> None:
        self.table_title.setText(
            f"The second article's table for d_model {s.d_model}, {s.heads} head(s), {s.dtype}"
            + (", causal" if s.causal else "")
            + " (its printed values are d_model 512, one head, fp32; MiB = 2²⁰ bytes)"
        )
        for row, n in enumerate(ARTICLE_LENGTHS):
            c = attention_cost(n, s.d_model, s.heads, s.causal, dtype=s.dtype)
            texts = (
                f"{n:,}",
                f"{c.article_flops:,}",
                f"{c.benchmark_flops:,}",
                mib_text(c.score_bytes_per_head),
            )
            for col, text in enumerate(texts):
                item = QTableWidgetItem(text)
                item.setTextAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
                self.table.setItem(row, col, item)

    def article_settings(self) -> None:
        """Back to the second article's settings: d_model 512, one head, one layer, fp32."""
        article = CostSettings()
        widgets = (self.d_model_spin, self.heads_spin, self.layers_spin, self.batch_spin)
        values = (article.d_model, article.heads, article.layers, article.batch)
        for widget, value in zip(widgets, values, strict=True):
            widget.blockSignals(True)
            widget.setValue(value)
            widget.blockSignals(False)
        for widget in (self.dtype_box, self.causal_box):
            widget.blockSignals(True)
        self.dtype_box.setCurrentText(article.dtype)
        self.causal_box.setChecked(article.causal)
        for widget in (self.dtype_box, self.causal_box):
            widget.blockSignals(False)
        self.change()

    def exercise(self) -> None:
        self.heads_spin.setValue(3)  # 512 is not divisible by 3: a message, the old state stays
        self.d_model_spin.setValue(0)
        self.d_model_spin.setValue(4_096)
        self.heads_spin.setValue(32)
        self.layers_spin.setValue(32)
        self.batch_spin.setValue(8)
        self.dtype_box.setCurrentText("fp8")
        self.causal_box.setChecked(True)
        self.n_slider.setValue(N_MAX)
        self.n_slider.setValue(N_MIN)
        self.article_settings()
        self.n_slider.setValue(4_096)


# --- 2. Handshakes ----------------------------------------------------------------------------------
class HandshakePage(QWidget):
    """n people on a circle, one line per handshake; doubling n about quadruples the lines."""

    def __init__(self):
        super().__init__()
        self.people = LabelledSlider("people n", 2, 40, 10, integer=True)
        self.note = note()
        self.room = pg.PlotWidget(title="Everyone greets everyone once")
        self.room.setAspectLocked(True)
        self.room.hideAxis("left")
        self.room.hideAxis("bottom")
        self.room.setMouseEnabled(x=False, y=False)
        self.room.setMenuEnabled(False)
        self.lines = self.room.plot([], [], pen=pg.mkPen(COLORS[0], width=1), connect="pairs")
        self.dots = self.room.plot([], [], pen=None, symbol="o", symbolSize=12, symbolBrush=COLORS[1])
        self.growth = pg.PlotWidget(title="Handshakes against people")
        self.growth.showGrid(x=True, y=True, alpha=0.25)
        self.growth.setLabel("bottom", "people n")
        self.growth.setLabel("left", "handshakes n(n−1)/2")
        self.growth.setMenuEnabled(False)
        people = np.arange(2, 81)
        self.growth.plot(people, [handshakes(int(k)) for k in people], pen=pg.mkPen(COLORS[0], width=2.5))
        self.marks = self.growth.plot([], [], pen=None, symbol="o", symbolSize=10, symbolBrush=COLORS[1])
        views = QHBoxLayout()
        views.addWidget(self.room, 1)
        views.addWidget(self.growth, 1)
        layout = QVBoxLayout(self)
        layout.addWidget(self.people)
        layout.addWidget(self.note)
        layout.addLayout(views, 1)
        self.people.valueChanged.connect(lambda v: self.recompute(int(v)))
        self.recompute(10)

    def recompute(self, n: int) -> None:
        self.n = n
        angle = np.pi / 2 - 2 * np.pi * np.arange(n) / n
        x, y = np.cos(angle), np.sin(angle)  # (n,) seats around the table
        i, j = handshake_pairs(n)
        ends = np.column_stack([i, j]).ravel()  # (2·pairs,) start and end of each line
        self.lines.setData(x[ends], y[ends])
        self.dots.setData(x, y)
        now, doubled = handshakes(n), handshakes(2 * n)
        self.marks.setData([n, 2 * n], [now, doubled])
        self.note.setText(
            f"<b>{n} people make {now:,} handshakes</b> (n(n−1)/2). Double the room to {2 * n} and "
            f"there are {doubled:,}: {doubled / now:.2f}× as many, because every newcomer greets the "
            "old guests and the other newcomers too. Attention over n tokens is the same room."
        )

    def exercise(self) -> None:
        for n in (2, 40, 20):
            self.people.setValue(n)


# --- 3. FlashAttention tile by tile -----------------------------------------------------------------
@dataclass(frozen=True)
class FlashSettings:
    n: int = 16
    d: int = 4
    block_q: int = 4
    block_k: int = 4
    causal: bool = False
    seed: int = 0


class FlashPage(QWidget):
    """Step through tiled attention: the tile in fast memory, running m and l, partial outputs."""

    def __init__(self, panel: CostPanel):
        super().__init__()
        self.panel = panel
        self.settings = FlashSettings()
        self.n_spin = _spin(16, 0, 64)
        self.d_spin = _spin(4, 0, 8)
        self.bq_spin = _spin(4, 0, 64)
        self.bk_spin = _spin(4, 0, 64)
        self.causal_box = QCheckBox("causal mask")
        self.seed_spin = _spin(0, 0, 2**31 - 1)
        form = QFormLayout()
        form.addRow("tokens n", self.n_spin)
        form.addRow("width d", self.d_spin)
        form.addRow("block_q", self.bq_spin)
        form.addRow("block_k", self.bk_spin)
        self.bq_spin.setToolTip("query rows per block")
        self.bk_spin.setToolTip("key and value rows per tile")
        form.addRow(self.causal_box)
        form.addRow("seed", self.seed_spin)
        self.prev_button = QPushButton("◀ Previous")
        self.next_button = QPushButton("Next tile ▶")
        self.step_slider = QSlider(Qt.Orientation.Horizontal)
        buttons = QHBoxLayout()
        buttons.addWidget(self.prev_button)
        buttons.addWidget(self.next_button)
        self.step_note = note()
        self.memory_note = note()
        self.check_note = note()
        controls = QVBoxLayout()
        controls.addLayout(form)
        controls.addLayout(buttons)
        controls.addWidget(self.step_slider)
        controls.addWidget(self.memory_note)
        controls.addWidget(self.check_note)
        controls.addStretch(1)
        controls_box = QWidget()
        controls_box.setLayout(controls)
        controls_box.setMaximumWidth(240)

        self.scores = Heatmap("Scores computed so far", signed=True, colorbar=False, cell_text=False)
        self.scores.set_describer(self._describe_score)
        self.tile_view = MatrixView("This tile, per query row", signed=True)
        self.state_view = MatrixView("Running state of every query row", signed=True)
        middle = QVBoxLayout()
        middle.addWidget(self.scores, 1)
        middle.addWidget(self.step_note)
        tables = QVBoxLayout()
        tables.addWidget(self.tile_view)
        tables.addWidget(self.state_view, 1)
        row = QHBoxLayout(self)
        row.addWidget(controls_box)
        row.addLayout(middle, 1)
        row.addLayout(tables)

        for spin in (self.n_spin, self.d_spin, self.bq_spin, self.bk_spin, self.seed_spin):
            spin.valueChanged.connect(self.change)
        self.causal_box.toggled.connect(self.change)
        self.step_slider.valueChanged.connect(self.show_tile)
        self.prev_button.clicked.connect(lambda: self.step_slider.setValue(self.step_slider.value() - 1))
        self.next_button.clicked.connect(lambda: self.step_slider.setValue(self.step_slider.value() + 1))
        self.recompute(self.settings)

    def change(self) -> None:
        """Recompute from what every control shows now."""
        self.recompute(
            FlashSettings(
                self.n_spin.value(),
                self.d_spin.value(),
                self.bq_spin.value(),
                self.bk_spin.value(),
                self.causal_box.isChecked(),
                self.seed_spin.value(),
            )
        )

    def recompute(self, s: FlashSettings) -> None:
        try:
            rng = np.random.default_rng(s.seed)
            Q, K, V = (rng.normal(size=(s.n, s.d)) for _ in range(3))
            mask = causal_mask(s.n) if s.causal else None
            trace = tiled_attention(Q, K, V, s.block_q, s.block_k, mask=mask)
        except ValueError as exc:
            self.panel.show_message(str(exc))
            return
        self.panel.clear_message()
        self.settings, self.trace = s, trace
        self.naive = attend(Q, K, V, mask=mask)
        self.error = float(np.abs(trace.output - self.naive.output).max())
        held = tiled_memory(s.n, s.n, s.d, s.block_q, s.block_k)
        self.memory_note.setText(
            f"<b>Memory held</b> (numbers, besides Q, K, V): naive attention keeps all n² = {held.naive:,} "
            f"scores; the tiled version keeps one {s.block_q} × {s.block_k} tile ({held.tile:,}) plus "
            f"m, l and the output of every row, {s.n} × ({s.d} + 2) = {held.running:,}: "
            f"<b>{held.tiled:,}</b> in all."
        )
        skipped = f" {len(trace.skipped)} tiles hidden by the mask are skipped." if trace.skipped else ""
        self.check_note.setText(
            f"<b>Final output against naive attention</b>: max |difference| = {self.error:.1e}.{skipped}"
        )
        self.score_levels = default_levels(self.naive.masked, signed=True)
        self.step_slider.blockSignals(True)
        self.step_slider.setRange(0, len(trace.steps) - 1)  # keeps the current step where it can
        self.step_slider.blockSignals(False)
        self.show_tile(self.step_slider.value())

    def show_tile(self, k: int) -> None:
        """Show the state right after step ``k`` of the trace."""
        trace, s = self.trace, self.settings
        step = trace.steps[k]
        tokens = [str(i) for i in range(s.n)]
        done = trace.computed_cells(k)
        self.scores.set_data(np.where(done, self.naive.masked, -np.inf), tokens, tokens, self.score_levels)
        self.scores.mark(
            step.rows.start, step.cols.start, len(range(s.n)[step.rows]), len(range(s.n)[step.cols])
        )
        state = trace.state_after(k)
        before = trace.state_after(k - 1).m[step.rows] if k else np.full(len(step.m), -np.inf)
        rows = tokens[step.rows]
        self.tile_view.set_data(
            np.column_stack([step.tile_max, before, step.m, step.rescale, step.l]),
            rows,
            ["tile max", "m before", "m after", "rescale", "l after"],
        )
        self.state_view.set_data(
            np.column_stack([state.m, state.l, state.output]),
            tokens,
            ["m", "l", *(f"o{j}" for j in range(s.d))],
        )
        self.state_view.highlight(rows=range(step.rows.start, step.rows.stop))
        self.step_note.setText(
            f"<b>Step {k + 1} of {len(trace.steps)}</b>: in fast memory are query block {step.q_block} "
            f"(rows {step.rows.start}–{step.rows.stop - 1}) and key/value tile {step.k_block} "
            f"(keys {step.cols.start}–{step.cols.stop - 1}), outlined. Where a row's maximum rises, "
            "its old l and output are multiplied by the rescale factor exp(m before − m after)."
        )
        self.prev_button.setEnabled(k > 0)
        self.next_button.setEnabled(k < len(trace.steps) - 1)

    def _describe_score(self, i: int, j: int) -> str:
        if not np.isfinite(self.scores.values[i, j]):
            return "not computed yet" if self.naive.mask is None or self.naive.mask[i, j] else "hidden"
        return f"q{i}·k{j} / √{self.settings.d}"

    def exercise(self) -> None:
        self.bq_spin.setValue(0)
        self.bq_spin.setValue(64)
        self.bq_spin.setValue(4)
        self.n_spin.setValue(0)
        self.n_spin.setValue(64)
        self.bk_spin.setValue(5)
        self.causal_box.setChecked(True)
        self.d_spin.setValue(0)
        self.seed_spin.setValue(3)
        for k in range(len(self.trace.steps)):
            self.step_slider.setValue(k)
        self.n_spin.setValue(16)
        self.bk_spin.setValue(4)
        self.causal_box.setChecked(False)
        self.d_spin.setValue(4)
        self.seed_spin.setValue(0)
        self.step_slider.setValue(6)


# --- 4. Sliding window and sparse patterns ------------------------------------------------------------
@dataclass(frozen=True)
class SparseSettings:
    n: int = 4_096
    window: int = 8
    n_global: int = 2
    causal: bool = False


class SparsePage(QWidget):
    """How many of the n² cells a window (plus global tokens) computes, as n grows."""

    def __init__(self, panel: CostPanel):
        super().__init__()
        self.panel = panel
        self.settings = SparseSettings()
        self.n_slider = LabelledSlider("n", N_MIN, N_MAX, 4_096, log=True, integer=True)
        self.window_slider = LabelledSlider("window w", 1, 4_096, 8, log=True, integer=True)
        self.global_spin = _spin(2, 0, 64)
        self.causal_box = QCheckBox("causal")
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
        left_box = QWidget()
        left_box.setLayout(left)
        left_box.setMaximumWidth(380)
        self.cells_plot = _loglog_plot("Cells computed", "cells", legend_at=(8, 8))
        self.fraction_plot = _loglog_plot("Share of the n² cells", "fraction", legend_at=(8, -8))
        names = {"full": "full attention", "window": "window", "global": "window + global"}
        self.cell_curves = {
            key: _curve(self.cells_plot, name, COLORS[k]) for k, (key, name) in enumerate(names.items())
        }
        self.fraction_curves = {
            key: _curve(self.fraction_plot, name, COLORS[k]) for k, (key, name) in enumerate(names.items())
        }
        anchors = {"full": (0, 1), "window": (0, 0), "global": (1, 1)}
        self.cell_slopes = {
            key: _slope_label(self.cells_plot, COLORS[k], anchors[key]) for k, key in enumerate(names)
        }
        self.n_lines = [pg.InfiniteLine(angle=90, pen=pg.mkPen("#888888")) for _ in range(2)]
        self.cells_plot.addItem(self.n_lines[0])
        self.fraction_plot.addItem(self.n_lines[1])
        plots = QHBoxLayout()
        plots.addWidget(self.cells_plot)
        plots.addWidget(self.fraction_plot)
        row = QHBoxLayout(self)
        row.addWidget(left_box)
        row.addLayout(plots, 1)
        for control in (self.n_slider, self.window_slider, self.global_spin):
            control.valueChanged.connect(self.change)
        self.causal_box.toggled.connect(self.change)
        self.recompute(self.settings)

    def change(self) -> None:
        """Recompute from what every control shows now."""
        self.recompute(
            SparseSettings(
                int(self.n_slider.value()),
                int(self.window_slider.value()),
                self.global_spin.value(),
                self.causal_box.isChecked(),
            )
        )

    def _cells(self, s: SparseSettings, n: int) -> dict[str, int]:
        return {
            "full": pattern_cells(n, n, 0, s.causal),
            "window": pattern_cells(n, s.window, 0, s.causal),
            "global": pattern_cells(n, s.window, s.n_global, s.causal),
        }

    def recompute(self, s: SparseSettings) -> None:
        try:
            if s.n_global > PATTERN_PICTURE_N:
                raise ValueError(f"Choose at most {PATTERN_PICTURE_N} global tokens.")
            picture = global_local(PATTERN_PICTURE_N, s.window, range(s.n_global), causal=s.causal)
            now = self._cells(s, s.n)
        except ValueError as exc:
            self.panel.show_message(str(exc))
            return
        self.panel.clear_message()
        self.settings = s
        self.picture.set_data(picture.astype(float), levels=(0.0, 1.0))
        grid = sorted({*N_GRID, s.n})
        table = [self._cells(s, n) for n in grid]
        for key in self.cell_curves:
            cells = [t[key] for t in table]
            self.cell_curves[key].setData(grid, np.array(cells, dtype=float))
            self.fraction_curves[key].setData(
                grid, np.array(cells, dtype=float) / np.square(grid, dtype=float)
            )
            _place_slope(self.cell_slopes[key], grid, cells, s.n)
        for line in self.n_lines:
            line.setValue(np.log10(s.n))
        total = s.n * s.n
        self.note.setText(
            f"At <b>n = {s.n:,}</b> there are {total:,} query–key cells. Full attention"
            f"{' (causal)' if s.causal else ''} computes {now['full']:,} ({percent(now['full'], total)}); "
            f"a window of {s.window:,} computes {now['window']:,} ({percent(now['window'], total)}); "
            f"with {s.n_global} global token(s) {now['global']:,} ({percent(now['global'], total)}). "
            "A window grows like n·w, each global token adds about 2n: linear, not quadratic."
        )

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


# --- the panel -----------------------------------------------------------------------------------------
class CostPanel(Panel):
    key = "cost"
    title = "Cost and FlashAttention"
    steps = ("Cost calculator", "Handshakes", "FlashAttention tile by tile", "Sliding window and sparse")

    def __init__(self, parent=None):
        super().__init__(parent)
        self.calculator = CalculatorPage(self)
        self.handshakes = HandshakePage()
        self.flash = FlashPage(self)
        self.sparse = SparsePage(self)
        self.pages = QStackedWidget()
        for page in (self.calculator, self.handshakes, self.flash, self.sparse):
            self.pages.addWidget(page)
        self.body.addWidget(self.pages)
        self.set_step(0)

    def show_step(self, i: int) -> None:
        self.clear_message()
        self.pages.setCurrentIndex(i)

    def exercise(self) -> None:
        for i, page in enumerate((self.calculator, self.handshakes, self.flash, self.sparse)):
            self.set_step(i)
            page.exercise()
        self.set_step(2)

    def export(self) -> dict[str, QWidget]:
        return {
            "flops": self.calculator.flops_plot,
            "score_memory": self.calculator.memory_plot,
            "article_table": self.calculator.table,
            "handshakes": self.handshakes.room,
            "flash_scores": self.flash.scores,
            "flash_state": self.flash.state_view,
            "sparse_cells": self.sparse.cells_plot,
        }
