"""Panel "Scale and temperature": why scores are divided by √d_k, and how soft the soft lookup is."""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QFormLayout,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QLayout,
    QLineEdit,
    QProgressBar,
    QSpinBox,
    QStackedWidget,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from app import worker
from app.panels.base import Panel
from app.widgets import Heatmap, LabelledSlider
from app.widgets.controls import note, set_quietly
from core import explain, scaling

MULTIPLIER_GRID = np.linspace(0.1, 16.0, 160)  # x of the winner's-gradient curve
TEMPERATURE_GRID = np.geomspace(0.05, 20.0, 121)  # x of the mean-entropy curve
ARTICLE_TEMPERATURES = (0.25, 0.5, 1.0, 2.0, 4.0)  # the second article's sweep
HEAD_WIDTHS = 2 ** np.arange(10)  # d_k = 1 … 512 within d_model 512
HEAD_TOKENS = 8
MAX_SEED = 2**31 - 1
ACCENT, SECOND, GUIDE = "#ff8c00", "#d62728", "#888888"


@dataclass(frozen=True)
class Settings:
    scores: tuple[float, ...] = (1.0, 2.0, 3.0)
    multiplier: float = 1.0
    samples: int = 2000
    growth_d_k: int = 64
    divide: bool = False
    preset: scaling.TokenPreset = scaling.PRESETS[0]
    temperature: float = 1.0
    head_d_k: int = 64
    head_seed: int = 0


def _spin(value: int, maximum: int) -> QSpinBox:
    """A whole-number box from 0 (so a bad 0 can be typed and answered) that reports on Enter."""
    spin = QSpinBox()
    spin.setRange(0, maximum)
    spin.setValue(value)
    spin.setKeyboardTracking(False)
    return spin


def _plot(layout: pg.GraphicsLayoutWidget, title: str, x: str, y: str, row: int, col: int, **kw):
    plot = layout.addPlot(row=row, col=col, title=title, **kw)
    plot.setLabel("bottom", x)
    plot.setLabel("left", y)
    plot.setMouseEnabled(x=False, y=False)
    plot.setMenuEnabled(False)
    plot.hideButtons()
    plot.showGrid(x=False, y=True, alpha=0.15)
    plot.getAxis("left").enableAutoSIPrefix(False)
    return plot


def _log_x(plot: pg.PlotItem, ticks) -> None:
    """A logarithmic x axis labelled at ``ticks`` (plain numbers, not powers of ten)."""
    plot.setLogMode(x=True, y=False)
    plot.getAxis("bottom").setTicks([[(np.log10(t), f"{t:g}") for t in ticks], []])


def _uniform_line() -> pg.InfiniteLine:
    """The dashed ceiling ln(n) that uniform attention reaches; its value is set later."""
    return pg.InfiniteLine(
        angle=0,
        pen=pg.mkPen(GUIDE, width=1.5, style=Qt.PenStyle.DashLine),
        label="uniform: ln n = {value:.3f}",
        labelOpts={"position": 0.35, "color": GUIDE, "anchors": [(0.5, 1.0), (0.5, 1.0)]},
    )


def _marker() -> pg.ScatterPlotItem:
    return pg.ScatterPlotItem(size=13, brush=pg.mkBrush(ACCENT), pen=pg.mkPen("k", width=1), symbol="o")


class ScalePanel(Panel):
    key = "scale"
    title = "Scale and temperature"
    steps = ("Softmax saturation", "Dot products grow like √dₖ", "Temperature", "dₖ and the heads budget")

    def __init__(self, parent=None):
        super().__init__(parent)
        self.settings = Settings()
        self.growth: scaling.Growth | None = None
        self.growth_task: worker.Task | None = None
        self.pages = QStackedWidget()
        for build in (self._build_saturation, self._build_growth, self._build_temperature, self._build_heads):
            self.pages.addWidget(build())
        self.body.addWidget(self.pages, 1)
        self._set_scores(self.settings.scores)
        self._load_tokens(self.settings.preset)
        self._load_heads(self.settings.head_seed)
        self._measure(self.settings.samples)
        self.set_step(0)

    # --- step 1: softmax saturation -------------------------------------------------------------
    def _build_saturation(self) -> QWidget:
        s = self.settings
        self.scores_edit = QLineEdit(", ".join(f"{v:g}" for v in s.scores))
        self.scores_edit.setPlaceholderText("numbers separated by commas, e.g. 1, 2, 3")
        self.multiplier_slider = LabelledSlider("Multiplier ×", 0, 16, s.multiplier, integer=True)
        controls = QHBoxLayout()
        controls.addWidget(QLabel("Scores"))
        controls.addWidget(self.scores_edit, 1)
        controls.addWidget(self.multiplier_slider, 2)

        self.saturation_view = pg.GraphicsLayoutWidget()
        self.weights_plot = _plot(
            self.saturation_view, "Weights softmax(scores × m)", "score", "weight", 0, 0
        )
        self.weights_plot.setYRange(0, 1.05, padding=0)
        self.weight_bars = pg.BarGraphItem(x=[0], height=[0], width=0.6, brush="#3d7bd9")
        self.weights_plot.addItem(self.weight_bars)
        self.slope_plot = _plot(
            self.saturation_view, "Slope of each weight ∂pᵢ/∂zᵢ = pᵢ(1 − pᵢ)", "score", "slope", 0, 1
        )
        self.slope_plot.setYRange(0, 0.26, padding=0)
        self.slope_bars = pg.BarGraphItem(x=[0], height=[0], width=0.6, brush="#2ca02c")
        self.slope_plot.addItem(self.slope_bars)
        self.gradient_plot = _plot(
            self.saturation_view,
            "The winner's slope as the multiplier grows",
            "multiplier m",
            "slope",
            1,
            0,
            colspan=2,
        )
        self.gradient_plot.setXRange(0, 16, padding=0.02)
        self.gradient_plot.setYRange(0, 0.26, padding=0)
        self.gradient_curve = self.gradient_plot.plot(pen=pg.mkPen("#2ca02c", width=2))
        self.gradient_marker = _marker()
        self.gradient_plot.addItem(self.gradient_marker)
        self.saturation_readout = note("")

        self.scores_edit.textChanged.connect(self._on_scores_text)
        self.multiplier_slider.valueChanged.connect(self._set_multiplier)
        return self._page(
            "Type a few scores and stretch them with the multiplier. Larger scores make the softmax "
            "more decisive; once one weight is near 1, every slope is near 0 and learning stalls.",
            controls,
            self.saturation_view,
            self.saturation_readout,
        )

    def _on_scores_text(self, text: str) -> None:
        try:
            scores = scaling.parse_scores(text)
        except ValueError as exc:
            self.show_message(str(exc))
            return
        self._set_scores(tuple(scores.tolist()))

    def _set_scores(self, scores: tuple[float, ...]) -> None:
        try:
            current = scaling.saturate(np.array(scores), self.settings.multiplier)
            curve = scaling.saturation_sweep(np.array(scores), MULTIPLIER_GRID)
        except ValueError as exc:
            self.show_message(str(exc))
            return
        self.settings = replace(self.settings, scores=scores)
        self.gradient_curve.setData(MULTIPLIER_GRID, curve)
        ticks = [[(k, explain.num(v, 2).rstrip("0").rstrip(".")) for k, v in enumerate(scores)]]
        for plot in (self.weights_plot, self.slope_plot):
            plot.getAxis("bottom").setTicks(ticks)
            plot.setXRange(-0.6, len(scores) - 0.4, padding=0)
        self._show_saturation(current)

    def _set_multiplier(self, value: float) -> None:
        try:
            current = scaling.saturate(np.array(self.settings.scores), value)
        except ValueError as exc:
            self.show_message(str(exc))
            return
        self.settings = replace(self.settings, multiplier=float(value))
        self._show_saturation(current)

    def _show_saturation(self, sat: scaling.Saturation) -> None:
        self.clear_message()
        x = np.arange(sat.weights.size)
        self.weight_bars.setOpts(x=x, height=sat.weights)
        self.slope_bars.setOpts(x=x, height=np.diag(sat.jacobian))
        self.gradient_marker.setData([sat.multiplier], [sat.winner_gradient])
        weights = " / ".join(explain.num(w) for w in sat.weights)
        logits = ", ".join(explain.num(z, 2) for z in sat.logits)
        self.saturation_readout.setText(
            f"×{sat.multiplier:g}: softmax inputs {logits} → weights {weights}.  "
            f"The winner's slope p(1 − p) = {sat.winner_gradient:.3g} (at most 0.25)."
        )

    # --- step 2: dot products grow like √d_k ------------------------------------------------------
    def _build_growth(self) -> QWidget:
        s = self.settings
        widths = scaling.GROWTH_WIDTHS
        self.growth_slider = LabelledSlider(
            "dₖ", widths[0], widths[-1], s.growth_d_k, log=True, integer=True, choices=widths
        )
        self.samples_spin = _spin(s.samples, 1_000_000_000)
        self.samples_spin.setSingleStep(1000)
        self.samples_spin.setGroupSeparatorShown(True)
        self.divide_box = QCheckBox("divide by √dₖ")
        self.growth_progress = QProgressBar()
        self.growth_progress.setMaximumWidth(160)
        self.growth_progress.setTextVisible(False)
        controls = QHBoxLayout()
        controls.addWidget(self.growth_slider, 2)
        controls.addWidget(QLabel("Samples"))
        controls.addWidget(self.samples_spin)
        controls.addWidget(self.divide_box)
        controls.addWidget(self.growth_progress)

        self.growth_view = pg.GraphicsLayoutWidget()
        self.growth_plot = _plot(self.growth_view, "", "dₖ (log scale)", "typical size of q·k", 0, 0)
        _log_x(self.growth_plot, widths)
        self.growth_plot.addLegend(offset=(10, 10))
        dense = np.geomspace(1, widths[-1], 200)
        self.reference_x = dense
        self.reference_curve = self.growth_plot.plot(dense, np.sqrt(dense), pen=pg.mkPen(GUIDE, width=2))
        self.measured_points = self.growth_plot.plot(
            [], [], pen=None, symbol="o", symbolSize=8, symbolBrush="#3d7bd9", name="measured std of q·k"
        )
        self.growth_marker = _marker()
        self.growth_plot.addItem(self.growth_marker)
        self.growth_plot.legend.addItem(self.reference_curve, "√dₖ")
        self.growth_readout = note("")

        self.growth_slider.valueChanged.connect(lambda v: self._set_growth(growth_d_k=int(v)))
        self.divide_box.toggled.connect(lambda on: self._set_growth(divide=on))
        self.samples_spin.valueChanged.connect(self._measure)
        self._show_growth_axes()
        return self._page(
            "Random q and k with unit-variance entries: their dot product sums dₖ terms, so its spread "
            "grows like √dₖ. Dividing by √dₖ brings it back to about 1 for every width.",
            controls,
            self.growth_view,
            self.growth_readout,
        )

    def _measure(self, requested: int) -> None:
        """Measure the spread at every width in the background with ``requested`` samples."""
        try:
            samples, warning = scaling.capped_samples(requested)
        except ValueError as exc:
            self.show_message(str(exc))
            return
        if samples != requested:
            set_quietly(self.samples_spin, samples)
        if self.growth_task is not None:
            self.growth_task.cancel()
        self.growth_readout.setText(f"Measuring the spread with {samples:,} samples per width…")
        self.settings = replace(self.settings, samples=samples)
        self.growth_progress.setValue(0)
        self.growth_progress.show()
        self.growth_task = worker.run_task(
            scaling.dot_product_spread,
            scaling.GROWTH_WIDTHS,
            samples,
            np.random.default_rng(0),
            on_result=self._on_growth,
            on_error=self.show_message,
            on_progress=self._on_growth_progress,
        )
        if warning:
            self.show_message(warning, "warning")
        else:
            self.clear_message()

    def _on_growth_progress(self, done: int, total: int) -> None:
        self.growth_progress.setMaximum(total)
        self.growth_progress.setValue(done)

    def _on_growth(self, growth: scaling.Growth) -> None:
        self.growth = growth
        self.growth_progress.hide()
        self._show_growth()

    def _set_growth(self, **change) -> None:
        self.settings = replace(self.settings, **change)
        if "divide" in change:
            self._show_growth_axes()
        self._show_growth()

    def _show_growth_axes(self) -> None:
        divide = self.settings.divide
        self.growth_plot.setTitle(
            "Spread of q·k ÷ √dₖ stays near 1" if divide else "Spread of q·k grows like √dₖ"
        )
        self.growth_plot.setLabel("left", "spread of q·k / √dₖ" if divide else "spread of q·k")
        reference = np.ones_like(self.reference_x) if divide else np.sqrt(self.reference_x)
        self.reference_curve.setData(self.reference_x, reference)
        self.growth_plot.legend.getLabel(self.reference_curve).setText("1" if divide else "√dₖ")
        self.growth_plot.setYRange(0, 1.6 if divide else 34, padding=0)

    def _show_growth(self) -> None:
        g, s = self.growth, self.settings
        if g is None:
            return
        self.measured_points.setData(g.widths, g.spread_scaled if s.divide else g.spread)
        spread, scaled = g.at(s.growth_d_k)
        self.growth_marker.setData([np.log10(s.growth_d_k)], [scaled if s.divide else spread])
        self.growth_readout.setText(
            f"dₖ = {s.growth_d_k}: measured spread of q·k {explain.num(spread, 2)} "
            f"(√{s.growth_d_k} = {explain.num(np.sqrt(s.growth_d_k), 2)}); divided by √dₖ it is "
            f"{explain.num(scaled, 3)}.  {g.samples:,} samples per width."
        )

    # --- step 3: temperature ------------------------------------------------------------------------
    def _build_temperature(self) -> QWidget:
        s = self.settings
        self.preset_combo = QComboBox()
        self.preset_combo.addItems([p.name for p in scaling.PRESETS] + ["Custom"])
        self.tokens_spin = _spin(s.preset.n_tokens, scaling.MAX_TOKENS)
        self.d_k_spin = _spin(s.preset.d_k, scaling.MAX_WIDTH)
        self.seed_spin = _spin(s.preset.seed, MAX_SEED)
        self.temperature_slider = LabelledSlider("Temperature T", 0.05, 20.0, s.temperature, log=True)
        form = QFormLayout()
        form.addRow("Preset", self.preset_combo)
        form.addRow("Tokens", self.tokens_spin)
        form.addRow("dₖ", self.d_k_spin)
        form.addRow("Seed", self.seed_spin)

        self.token_table = QTableWidget(0, 4)
        self.token_table.setHorizontalHeaderLabels(["Query", "Peak key", "Max weight", "Entropy (nats)"])
        self.sweep_table = QTableWidget(len(ARTICLE_TEMPERATURES), 3)
        self.sweep_table.setHorizontalHeaderLabels(["T", "Mean entropy", "Mean max weight"])
        for table in (self.token_table, self.sweep_table):
            table.verticalHeader().hide()
            table.setEditTriggers(QTableWidget.EditTrigger.NoEditTriggers)
            table.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
            table.horizontalHeader().setStretchLastSection(True)
        self.temperature_summary = note("")
        left = QVBoxLayout()
        left.addLayout(form)
        left.addWidget(self.token_table, 3)
        left.addWidget(QLabel("Computed for the preset above,\nat the article's five temperatures"))
        left.addWidget(self.sweep_table, 2)
        left_box = QWidget()
        left_box.setLayout(left)
        left_box.setMaximumWidth(360)

        self.temperature_map = Heatmap("Weights at temperature T", colorbar=False)
        self.temperature_map.set_describer(lambda i, j: explain.weight(self.reading.trace, i, j))
        self.entropy_view = pg.GraphicsLayoutWidget()
        self.entropy_plot = _plot(
            self.entropy_view, "Mean entropy vs temperature", "temperature T (log scale)", "nats", 0, 0
        )
        _log_x(self.entropy_plot, (0.05, 0.2, 1, 5, 20))
        self.entropy_curve = self.entropy_plot.plot(pen=pg.mkPen("#3d7bd9", width=2))
        self.uniform_line = _uniform_line()
        self.entropy_plot.addItem(self.uniform_line)
        self.entropy_marker = _marker()
        self.entropy_plot.addItem(self.entropy_marker)
        right = QVBoxLayout()
        right.addWidget(self.temperature_slider)
        right.addWidget(self.temperature_summary)
        right.addWidget(self.temperature_map, 3)
        right.addWidget(self.entropy_view, 2)
        row = QHBoxLayout()
        row.addWidget(left_box)
        row.addLayout(right, 1)

        self.preset_combo.currentIndexChanged.connect(self._on_preset)
        self.tokens_spin.valueChanged.connect(lambda v: self._on_token_spin(n_tokens=v))
        self.d_k_spin.valueChanged.connect(lambda v: self._on_token_spin(d_k=v))
        self.seed_spin.valueChanged.connect(lambda v: self._on_token_spin(seed=v))
        self.temperature_slider.valueChanged.connect(self._set_temperature)
        return self._page(
            "The divisor becomes √dₖ·T. Small T: each query all but picks one key. Large T: the weights "
            "flatten towards 1/n and the entropy towards ln n.",
            None,
            row,
        )

    def _on_preset(self, index: int) -> None:
        if index < len(scaling.PRESETS):
            self._load_tokens(scaling.PRESETS[index])

    def _on_token_spin(self, **change) -> None:
        self._load_tokens(replace(self.settings.preset, name="Custom", **change))

    @staticmethod
    def _preset_index(preset: scaling.TokenPreset) -> int:
        """The combo row of the preset with these numbers, or the last row ("Custom")."""
        same = [
            (p.n_tokens, p.d_k, p.seed) == (preset.n_tokens, preset.d_k, preset.seed) for p in scaling.PRESETS
        ]
        return same.index(True) if any(same) else len(scaling.PRESETS)

    def _load_tokens(self, preset: scaling.TokenPreset) -> None:
        try:
            self.qkv = scaling.random_qkv(preset.n_tokens, preset.d_k, preset.seed)
            curve = scaling.temperature_sweep(*self.qkv, TEMPERATURE_GRID)
            article = scaling.temperature_sweep(*self.qkv, ARTICLE_TEMPERATURES)
            reading = scaling.read_temperature(*self.qkv, self.settings.temperature)
        except ValueError as exc:
            self.show_message(str(exc))
            return
        self.settings = replace(self.settings, preset=preset)
        self.preset_combo.blockSignals(True)
        self.preset_combo.setCurrentIndex(self._preset_index(preset))
        self.preset_combo.blockSignals(False)
        for spin, value in zip(
            (self.tokens_spin, self.d_k_spin, self.seed_spin),
            (preset.n_tokens, preset.d_k, preset.seed),
            strict=True,
        ):
            set_quietly(spin, value)
        self.entropy_curve.setData(curve.temperatures, curve.mean_entropy)
        self.uniform_line.setValue(curve.max_entropy)
        self.entropy_plot.setYRange(0, 1.25 * curve.max_entropy, padding=0)
        for r, t in enumerate(ARTICLE_TEMPERATURES):
            row = (f"{t:.2f}", f"{article.mean_entropy[r]:.4f}", f"{article.mean_peak[r]:.4f}")
            self._fill_row(self.sweep_table, r, row)
        self.token_table.setRowCount(preset.n_tokens)
        self._show_temperature(reading)

    def _set_temperature(self, value: float) -> None:
        try:
            reading = scaling.read_temperature(*self.qkv, value)
        except ValueError as exc:
            self.show_message(str(exc))
            return
        self.settings = replace(self.settings, temperature=float(value))
        self._show_temperature(reading)

    def _show_temperature(self, reading: scaling.TemperatureReading) -> None:
        self.clear_message()
        self.reading = reading
        n = reading.weights.shape[0]
        labels = [str(i) for i in range(n)]
        self.temperature_map.set_data(reading.weights, labels, labels, levels=(0.0, 1.0))
        for i in range(n):
            row = (
                str(i),
                str(reading.peak_index[i]),
                f"{reading.peak_weight[i]:.3f}",
                f"{reading.entropy[i]:.3f}",
            )
            self._fill_row(self.token_table, i, row)
        self.entropy_marker.setData([np.log10(reading.temperature)], [reading.mean_entropy])
        self.temperature_summary.setText(
            f"T = {reading.temperature:.2f}: mean entropy {reading.mean_entropy:.4f} nats "
            f"(uniform: ln {n} = {reading.max_entropy:.4f}); mean max weight "
            f"{reading.mean_peak:.4f} (uniform: 1/{n} = {1 / n:.4f})."
        )

    @staticmethod
    def _fill_row(table: QTableWidget, r: int, texts: tuple[str, ...]) -> None:
        for c, text in enumerate(texts):
            item = table.item(r, c)
            if item is None:
                item = QTableWidgetItem()
                item.setTextAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
                table.setItem(r, c, item)
            item.setText(text)

    # --- step 4: d_k and the heads budget ------------------------------------------------------------
    def _build_heads(self) -> QWidget:
        s = self.settings
        self.head_slider = LabelledSlider(
            "dₖ", HEAD_WIDTHS[0], HEAD_WIDTHS[-1], s.head_d_k, log=True, integer=True, choices=HEAD_WIDTHS
        )
        self.head_seed_spin = _spin(s.head_seed, MAX_SEED)
        controls = QHBoxLayout()
        controls.addWidget(self.head_slider, 2)
        controls.addWidget(QLabel("Seed"))
        controls.addWidget(self.head_seed_spin)
        self.scaled_map = Heatmap("With ÷ √dₖ", colorbar=False)
        self.scaled_map.set_describer(lambda i, j: explain.weight(self.comparison.scaled, i, j))
        self.unscaled_map = Heatmap("Without scaling", colorbar=False)
        self.unscaled_map.set_describer(lambda i, j: explain.weight(self.comparison.unscaled, i, j))
        self.heads_view = pg.GraphicsLayoutWidget()
        self.heads_plot = _plot(self.heads_view, "Mean entropy vs head width", "dₖ (log scale)", "nats", 0, 0)
        _log_x(self.heads_plot, HEAD_WIDTHS)
        self.heads_plot.addLegend(offset=(10, -10))
        self.scaled_curve = self.heads_plot.plot(
            pen=pg.mkPen("#3d7bd9", width=2), symbol="o", symbolSize=6, name="with ÷ √dₖ"
        )
        self.unscaled_curve = self.heads_plot.plot(
            pen=pg.mkPen(SECOND, width=2), symbol="s", symbolSize=6, symbolBrush=SECOND, name="without"
        )
        self.heads_uniform = _uniform_line()
        self.heads_plot.addItem(self.heads_uniform)
        self.heads_marker = _marker()
        self.heads_plot.addItem(self.heads_marker)
        self.heads_readout = note("")
        maps = QHBoxLayout()
        maps.addWidget(self.scaled_map, 1)
        maps.addWidget(self.unscaled_map, 1)
        views = QVBoxLayout()
        views.addLayout(maps, 1)
        views.addWidget(self.heads_view, 1)

        self.head_slider.valueChanged.connect(lambda v: self._set_head_width(int(v)))
        self.head_seed_spin.valueChanged.connect(self._load_heads)
        return self._page(
            f"The same {HEAD_TOKENS} tokens, projected to dₖ columns of W_Q and W_K "
            f"(d_model {scaling.D_MODEL}, so d_model / dₖ heads fit). Without the division the "
            "scores grow with dₖ and the weights collapse to one-hot rows.",
            controls,
            views,
            self.heads_readout,
        )

    def _load_heads(self, seed: int) -> None:
        try:
            proj = scaling.random_projection(HEAD_TOKENS, seed)
            sweep = scaling.reprojection_sweep(proj, HEAD_WIDTHS)
            comparison = scaling.compare_scaling(proj, self.settings.head_d_k)
        except ValueError as exc:
            self.show_message(str(exc))
            return
        self.projection = proj
        self.settings = replace(self.settings, head_seed=int(seed))
        self.scaled_curve.setData(sweep.widths, sweep.entropy_scaled)
        self.unscaled_curve.setData(sweep.widths, sweep.entropy_unscaled)
        self.heads_uniform.setValue(sweep.max_entropy)
        self.heads_plot.setYRange(0, 1.25 * sweep.max_entropy, padding=0)
        self._show_heads(comparison)

    def _set_head_width(self, d_k: int) -> None:
        try:
            comparison = scaling.compare_scaling(self.projection, d_k)
        except ValueError as exc:
            self.show_message(str(exc))
            return
        self.settings = replace(self.settings, head_d_k=d_k)
        self._show_heads(comparison)

    def _show_heads(self, c: scaling.ScalingComparison) -> None:
        self.clear_message()
        self.comparison = c
        labels = [str(i) for i in range(HEAD_TOKENS)]
        self.scaled_map.set_data(c.scaled.weights, labels, labels, levels=(0.0, 1.0))
        self.unscaled_map.set_data(c.unscaled.weights, labels, labels, levels=(0.0, 1.0))
        x = np.log10(c.d_k)
        self.heads_marker.setData([x, x], [c.entropy_scaled, c.entropy_unscaled])
        self.heads_readout.setText(
            f"dₖ = {c.d_k}: {c.heads} head{'s' if c.heads > 1 else ''} of width {c.d_k} fill "
            f"d_model {self.projection.X.shape[1]}. Mean entropy {c.entropy_scaled:.3f} nats with "
            f"÷ √{c.d_k}, {c.entropy_unscaled:.3f} without (uniform: ln {HEAD_TOKENS} = "
            f"{np.log(HEAD_TOKENS):.3f})."
        )

    # --- shared -------------------------------------------------------------------------------------
    @staticmethod
    def _page(text: str, controls: QLayout | None, view: QWidget | QLayout, readout: QLabel | None = None):
        """A step's page: a short note, its controls, the view (stretching), a live readout."""
        page = QWidget()
        layout = QVBoxLayout(page)
        layout.addWidget(note(text))
        if controls is not None:
            layout.addLayout(controls)
        if isinstance(view, QWidget):
            layout.addWidget(view, 1)
        else:
            layout.addLayout(view, 1)
        if readout is not None:
            layout.addWidget(readout)
        return page

    def show_step(self, i: int) -> None:
        self.pages.setCurrentIndex(i)

    def exercise(self) -> None:
        self.scores_edit.setText("1, two, 3")
        self.scores_edit.setText("")
        self.scores_edit.setText("1e308, 2")
        self.multiplier_slider.setValue(16)
        self.multiplier_slider.setValue(0)
        self.scores_edit.setText("1, 2, 3, 0.5")
        self.multiplier_slider.setValue(8)
        self.scores_edit.setText("1, 2, 3")
        self.samples_spin.setValue(0)
        self.samples_spin.setValue(10**8)
        self.samples_spin.setValue(2000)
        self.divide_box.setChecked(True)
        self.growth_slider.setValue(1)
        self.growth_slider.setValue(1024)
        self.divide_box.setChecked(False)
        self.growth_slider.setValue(512)
        self.d_k_spin.setValue(0)
        self.tokens_spin.setValue(16)
        self.preset_combo.setCurrentIndex(1)
        self.preset_combo.setCurrentIndex(0)
        for t in (0.05, 20.0, 0.5):
            self.temperature_slider.setValue(t)
        for d_k in (1, 512, 64):
            self.head_slider.setValue(d_k)
        self.head_seed_spin.setValue(3)
        self.head_seed_spin.setValue(0)
        super().exercise()

    def export(self) -> dict[str, QWidget]:
        return {
            "saturation": self.saturation_view,
            "growth": self.growth_view,
            "temperature weights": self.temperature_map,
            "entropy vs temperature": self.entropy_view,
            "weights with scaling": self.scaled_map,
            "weights without scaling": self.unscaled_map,
            "entropy vs head width": self.heads_view,
        }
