"""Step 1: FLOPs and score-matrix memory of attention against n, with the article's table."""

from __future__ import annotations

from dataclasses import asdict

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QFormLayout,
    QHBoxLayout,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from app.panels.cost import scripts
from app.panels.cost.plots import COLORS, curve, place_slope, slope_label
from app.panels.cost.state import (
    ARTICLE,
    N_MAX,
    N_MIN,
    CostResult,
    CostState,
    compute_cost,
    percent,
)
from app.panels.scripts import Script
from app.panels.step import Live, Notice, Step
from app.widgets import LabelledSlider
from app.widgets.plots import loglog_plot
from app.widgets.spin_boxes import spin
from app.widgets.tables import fill_table, text_table
from app.widgets.text import note
from core.maths.complexity import DTYPE_BYTES, MEMORY_SIZES, AttentionCost
from core.printing import size_text


class CalculatorPage(Step):
    """FLOPs and score-matrix memory of attention, live, with the article's table recomputed."""

    def __init__(self):
        super().__init__(Live(CostState(), compute_cost))
        s = self.state
        self.n_slider = self.bind(LabelledSlider("n", N_MIN, N_MAX, s.n, log=True, integer=True), "n", int)
        self.d_model_spin = self.bind(spin(s.d_model, 0, 65_536, tracking=True), "d_model")
        self.heads_spin = self.bind(spin(s.heads, 0, 1_024, tracking=True), "heads")
        self.layers_spin = self.bind(spin(s.layers, 0, 1_000, tracking=True), "layers")
        self.batch_spin = self.bind(spin(s.batch, 0, 4_096, tracking=True), "batch")
        self.dtype_box = QComboBox()
        self.dtype_box.addItems(list(DTYPE_BYTES))
        self.bind(self.dtype_box, "dtype")
        self.causal_box = self.bind(QCheckBox("causal (decoder)"), "causal")
        self.article_button = QPushButton("Article's settings")
        self.article_button.setToolTip("d_model 512, one head, one layer, batch 1, fp32, not causal")
        self.article_button.clicked.connect(self.article_settings)
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

        self.flops_plot = loglog_plot("FLOPs of attention (whole model)", "FLOPs")
        self.flops_curves = {
            "qkv": curve(self.flops_plot, "projections", COLORS[0]),
            "quadratic": curve(self.flops_plot, "n² terms", COLORS[1]),
            "article": curve(self.flops_plot, "article total", COLORS[2]),
            "benchmark": curve(self.flops_plot, "4·n²·d·h", COLORS[3], Qt.PenStyle.DashLine),
        }
        anchors = {"qkv": (1, 0), "quadratic": (1, 0), "article": (0, 0), "benchmark": (1, 1)}
        self.flops_slopes = {
            key: slope_label(self.flops_plot, COLORS[k], anchors[key]) for k, key in enumerate(anchors)
        }
        self.memory_plot = loglog_plot("Score matrices in memory", "bytes")
        self.memory_curves = {
            "head": curve(self.memory_plot, "per head", COLORS[0]),
            "layer": curve(self.memory_plot, "per layer", COLORS[2]),
            "model": curve(self.memory_plot, "whole model", COLORS[1]),
        }
        self.memory_slope = slope_label(self.memory_plot, COLORS[1], anchor=(0, 0))
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
        self.table = text_table(
            ["n", "article FLOPs", "benchmark FLOPs", "MiB per head"], row_labels=False, fit=True
        )
        plots = QHBoxLayout()
        plots.addWidget(self.flops_plot)
        plots.addWidget(self.memory_plot)
        right = QVBoxLayout()
        right.addLayout(plots, 3)
        right.addWidget(self.table_title)
        right.addWidget(self.table)
        self.layout_with(None, form, right, (self.readout,))

    def views(self) -> dict[str, QWidget]:
        return {"flops": self.flops_plot, "score_memory": self.memory_plot, "article_table": self.table}

    @property
    def cost(self) -> AttentionCost:
        return self.result.cost

    def article_settings(self) -> None:
        """Back to the second article's settings (d_model 512, one head, one layer, fp32); n stays."""
        self.apply(**{**asdict(ARTICLE), "n": self.state.n})

    def script(self) -> Script:
        return scripts.calculator(self.state)

    def draw(self, r: CostResult) -> Notice:
        for key, values in r.flops.items():
            self.flops_curves[key].setData(r.grid, np.array(values, dtype=float))
            place_slope(self.flops_slopes[key], r.grid, values, r.cost.n if key == "article" else N_MAX)
        for key, values in r.memory.items():
            self.memory_curves[key].setData(r.grid, np.array(values, dtype=float))
        place_slope(self.memory_slope, r.grid, r.memory["model"], r.cost.n)
        pair = r.cost.score_bytes_per_token_pair
        self.crossings.setData(r.crossing_n, [float(n * n * pair) for n in r.crossing_n])
        for line in self.n_lines:
            line.setValue(np.log10(r.cost.n))
        self.readout.setText(self._readout(r))
        c = r.cost
        self.table_title.setText(
            f"The second article's table for d_model {c.d_model}, {c.heads} head(s), {c.dtype}"
            + (", causal" if c.causal else "")
            + " (its printed values are d_model 512, one head, fp32; MiB = 2²⁰ bytes)"
        )
        fill_table(self.table, r.table)
        return None

    @staticmethod
    def _readout(r: CostResult) -> str:
        c = r.cost
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
            f"{label} at n = {n:,}" for (label, _), n in zip(MEMORY_SIZES, r.crossing_n, strict=True)
        )
        lines.append(f"The whole model's score matrices outgrow {passes}.")
        return "<br>".join(lines)

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
