"""Panel "Memory": attention as one step of a modern Hopfield network, next to the classical one."""

from __future__ import annotations

import json
from dataclasses import dataclass, replace
from importlib.resources import files

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QComboBox,
    QFormLayout,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QProgressBar,
    QPushButton,
    QSpinBox,
    QStackedWidget,
    QVBoxLayout,
    QWidget,
)

from app import worker
from app.panels.base import Panel
from app.widgets import LabelledSlider
from app.widgets.controls import note, set_quietly
from app.widgets.pattern_grid import PatternGrid
from app.widgets.weight_bars import OTHER_COLOR, TARGET_COLOR, WeightBars
from core import inputs
from core.explain import num
from core.hopfield import (
    BETA_RANGE,
    CAPACITY_RATIO,
    MAX_STEPS,
    CapacitySweep,
    Comparison,
    Outcome,
    article_experiment,
    capacity_sweep,
    corrupt_and_compare,
    glyph_patterns,
    random_bipolar,
    temperature_for_beta,
    weights_over_beta,
)

N = 64  # neurons: every pattern is an 8 × 8 picture
SOURCES = {
    "digits": "Digits 0–9 (8 × 8)",
    "random": "Random ±1 patterns",
    "article": "Article experiment",
}
SHOWN = 10  # stored patterns drawn as pictures; the rest are counted
PATH_PICTURES = 8  # classical states drawn: the first ones and the final one
BETAS = np.geomspace(1e-3, 1e2, 121)  # β axis of the sharpening curve


def digit_glyphs() -> np.ndarray:
    """The ten 8 × 8 digit pictures shipped with the app. (10, 64)"""
    data = json.loads(files("resources").joinpath("presets", "memory_digits.json").read_text("utf-8"))
    return glyph_patterns(list(data["glyphs"].values()))


@dataclass(frozen=True)
class Settings:
    source: str = "digits"
    stored: int = 4
    target: int = 0
    flips: int = 8
    noise: float = 0.0
    beta: float = 1.0
    seed: int = 0


def _spin(value: int, maximum: int) -> QSpinBox:
    spin = QSpinBox()
    spin.setRange(0, maximum)
    spin.setValue(value)
    return spin


class MemoryPanel(Panel):
    key = "memory"
    title = "Memory (Hopfield)"
    steps = (
        "Store and corrupt",
        "Classical: sign updates",
        "Modern: one attention step",
        "β is an inverse temperature",
        "Capacity",
        "The article's experiment",
    )
    PAGE_OF_STEP = (0, 0, 0, 1, 2, 0)

    def __init__(self, parent=None):
        super().__init__(parent)
        self.digits = digit_glyphs()
        self.settings = Settings()
        self.comparison: Comparison | None = None
        self.sweep: CapacitySweep | None = None
        self.task: worker.Task | None = None
        self._build()
        self._apply(self.settings)
        self.set_step(0)

    # --- layout -----------------------------------------------------------------------------
    def _build(self) -> None:
        s = self.settings
        self.source_box = QComboBox()
        for key, text in SOURCES.items():
            self.source_box.addItem(text, key)
        self.stored_spin = _spin(s.stored, 400)
        self.target_spin = _spin(s.target, 399)
        self.flips_spin = _spin(s.flips, 999)
        self.noise_slider = LabelledSlider("Noise σ", 0.0, 1.5, s.noise)
        self.beta_slider = LabelledSlider("β", 1e-3, 1e2, s.beta, log=True, decimals=3)
        self.beta_edit = QLineEdit(num(s.beta, 3))
        self.beta_edit.setToolTip("Type any β > 0 and press Enter")
        self.attention_button = QPushButton("1/√64")
        self.attention_button.setToolTip("β = 1/√d: plain scaled dot-product attention (T = 1)")
        self.seed_spin = _spin(s.seed, 2**31 - 1)
        self.article_button = QPushButton("Article experiment")
        self.article_button.setToolTip(
            "9 ±1 patterns (classical), 200 Gaussian (modern), 64 dims, β = 1, seed 0"
        )
        beta_row = QHBoxLayout()
        beta_row.addWidget(self.beta_edit, 1)
        beta_row.addWidget(self.attention_button)
        form = QFormLayout()
        form.addRow("Patterns", self.source_box)
        form.addRow("Stored", self.stored_spin)
        form.addRow("Query pattern #", self.target_spin)
        form.addRow("Flipped pixels", self.flips_spin)
        form.addRow(self.noise_slider)
        form.addRow(self.beta_slider)
        form.addRow("Exact β", beta_row)
        form.addRow("Seed", self.seed_spin)
        form.addRow(self.article_button)
        left = QWidget()
        left.setLayout(form)
        left.setMaximumWidth(280)

        self.pages = QStackedWidget()
        self.pages.addWidget(self._retrieve_page())
        self.pages.addWidget(self._beta_page())
        self.pages.addWidget(self._capacity_page())
        row = QHBoxLayout()
        row.addWidget(left)
        row.addWidget(self.pages, 1)
        self.body.addLayout(row)

        self.source_box.currentIndexChanged.connect(self._on_source)
        self.stored_spin.valueChanged.connect(lambda v: self._change(stored=v))
        self.target_spin.valueChanged.connect(lambda v: self._change(target=v))
        self.flips_spin.valueChanged.connect(lambda v: self._change(flips=v))
        self.noise_slider.valueChanged.connect(lambda v: self._change(noise=v))
        self.beta_slider.valueChanged.connect(lambda v: self._change(beta=v))
        self.beta_edit.returnPressed.connect(self._on_beta_text)
        self.attention_button.clicked.connect(lambda: self.set_beta(1 / np.sqrt(N)))
        self.seed_spin.valueChanged.connect(lambda v: self._change(seed=v))
        self.article_button.clicked.connect(self.load_article)

    def _retrieve_page(self) -> QWidget:
        self.classical_stored = PatternGrid("Stored (Hebbian weights)")
        self.classical_path = PatternGrid("Query, then the state after each update")
        self.classical_verdict = note(rich=True)
        self.modern_stored = PatternGrid("Stored (keys = values)")
        self.modern_path = PatternGrid("Query → one step → target")
        self.modern_bars = WeightBars("weights softmax(β·X·q)", "stored pattern")
        self.modern_verdict = note(rich=True)
        columns = QHBoxLayout()
        for heading, stored, path, extra, verdict in (
            (
                "<b>Classical Hopfield</b>: sign(W·s) until nothing changes",
                self.classical_stored,
                self.classical_path,
                None,
                self.classical_verdict,
            ),
            (
                "<b>Modern Hopfield</b>: Xᵀ·softmax(β·X·query), once",
                self.modern_stored,
                self.modern_path,
                self.modern_bars,
                self.modern_verdict,
            ),
        ):
            column = QVBoxLayout()
            column.addWidget(note(heading, rich=True))
            stored.setMaximumHeight(160)
            path.setMaximumHeight(150)
            column.addWidget(stored, 2)
            column.addWidget(path, 2)
            column.addWidget(verdict)
            if extra is not None:
                column.addWidget(extra, 3)
            else:
                column.addStretch(3)
            columns.addLayout(column, 1)
        self.retrieve_note = note(rich=True)
        page = QWidget()
        layout = QVBoxLayout(page)
        layout.addWidget(self.retrieve_note)
        layout.addLayout(columns, 1)
        return page

    def _beta_page(self) -> QWidget:
        self.formula_note = note(rich=True)
        self.beta_plot = pg.PlotWidget(title="How the weights sharpen with β")
        self.beta_plot.setLogMode(x=True, y=False)
        self.beta_plot.setMouseEnabled(x=False, y=False)
        self.beta_plot.setMenuEnabled(False)
        self.beta_plot.hideButtons()
        self.beta_plot.setLabel("bottom", "β")
        self.beta_plot.setLabel("left", "weight")
        self.beta_plot.setYRange(0, 1.02, padding=0)
        self.beta_plot.getAxis("bottom").setTicks(
            [[(np.log10(b), f"{b:g}") for b in (1e-3, 1e-2, 0.1, 1, 10, 100)]]
        )
        self.beta_plot.addLegend(offset=(10, 10))
        self.target_curve = self.beta_plot.plot(pen=pg.mkPen(TARGET_COLOR, width=2), name="target")
        self.other_curve = self.beta_plot.plot(pen=pg.mkPen(OTHER_COLOR, width=2), name="strongest other")
        self.beta_line = pg.InfiniteLine(
            angle=90, pen=pg.mkPen("#888888", width=2), label="β now", labelOpts={"color": "#555555"}
        )
        self.attention_line = pg.InfiniteLine(
            pos=np.log10(1 / np.sqrt(N)),
            angle=90,
            pen=pg.mkPen("#888888", style=Qt.PenStyle.DashLine),
            label="1/√d",
            labelOpts={"position": 0.6, "color": "#555555"},
        )
        self.beta_plot.addItem(self.beta_line)
        self.beta_plot.addItem(self.attention_line)
        self.beta_pictures = PatternGrid("Output at this β")
        self.beta_pictures.setMaximumHeight(160)
        self.beta_bars = WeightBars("weights at this β", "stored pattern")
        row = QHBoxLayout()
        row.addWidget(self.beta_plot, 3)
        side = QVBoxLayout()
        side.addWidget(self.beta_pictures, 1)
        side.addWidget(self.beta_bars, 2)
        row.addLayout(side, 2)
        page = QWidget()
        layout = QVBoxLayout(page)
        layout.addWidget(self.formula_note)
        layout.addLayout(row, 1)
        return page

    def _capacity_page(self) -> QWidget:
        self.trials_spin = _spin(50, 1000)
        self.run_button = QPushButton("Run the sweep")
        self.cancel_button = QPushButton("Cancel")
        self.cancel_button.setEnabled(False)
        self.progress = QProgressBar()
        self.progress.setRange(0, 1)
        self.progress.setValue(0)
        controls = QHBoxLayout()
        controls.addWidget(QLabel("Trials per load"))
        controls.addWidget(self.trials_spin)
        controls.addWidget(self.run_button)
        controls.addWidget(self.cancel_button)
        controls.addWidget(self.progress, 1)
        self.capacity_plot = pg.PlotWidget(title="Corrupted queries recovered exactly (N = 64)")
        self.capacity_plot.setLogMode(x=True, y=False)
        self.capacity_plot.setMouseEnabled(x=False, y=False)
        self.capacity_plot.setMenuEnabled(False)
        self.capacity_plot.hideButtons()
        self.capacity_plot.setLabel("bottom", "stored patterns M")
        self.capacity_plot.setLabel("left", "recovered")
        self.capacity_plot.setYRange(0, 1.02, padding=0)
        self.capacity_plot.setXRange(0, np.log10(400), padding=0.03)
        loads = (1, 2, 5, 10, 20, 50, 100, 200, 400)
        self.capacity_plot.getAxis("bottom").setTicks([[(np.log10(m), str(m)) for m in loads]])
        self.capacity_plot.addLegend(offset=(-10, 10))
        self.classical_curve = self.capacity_plot.plot(
            pen=pg.mkPen(OTHER_COLOR, width=2), symbol="o", symbolBrush=OTHER_COLOR, name="classical"
        )
        self.modern_curve = self.capacity_plot.plot(
            pen=pg.mkPen(TARGET_COLOR, width=2), symbol="t", symbolBrush=TARGET_COLOR, name="modern"
        )
        self.limit_line = pg.InfiniteLine(
            pos=np.log10(CAPACITY_RATIO * N),
            angle=90,
            pen=pg.mkPen("#888888", style=Qt.PenStyle.DashLine),
            label=f"0.14·N = {num(CAPACITY_RATIO * N, 1)}",
            labelOpts={"position": 0.3, "color": "#555555"},
        )
        self.capacity_plot.addItem(self.limit_line)
        self.capacity_note = note(
            "Press <b>Run the sweep</b>: for each load M, the network stores M fresh random ±1 "
            "patterns, every one of them is queried with the chosen number of flipped pixels, "
            "and the plot shows the share that comes back exactly. β and flips come from the left.",
            rich=True,
        )
        page = QWidget()
        layout = QVBoxLayout(page)
        layout.addLayout(controls)
        layout.addWidget(self.capacity_note)
        layout.addWidget(self.capacity_plot, 1)
        self.run_button.clicked.connect(self.run_sweep)
        self.cancel_button.clicked.connect(self.cancel_sweep)
        return page

    # --- state changes ----------------------------------------------------------------------
    def _on_source(self, index: int) -> None:
        source = self.source_box.itemData(index)
        if source == "digits" and self.settings.stored > len(self.digits):
            set_quietly(self.stored_spin, len(self.digits))
        self._change(source=source, stored=self.stored_spin.value())

    def _on_beta_text(self) -> None:
        try:
            self.set_beta(inputs.real(self.beta_edit.text(), "β", *BETA_RANGE))
        except ValueError as exc:
            self.show_message(str(exc))
            self._sync_controls()

    def set_beta(self, beta: float) -> None:
        """Use β exactly (the slider follows as far as its range goes)."""
        self._change(beta=beta)

    def _change(self, **change) -> None:
        self._apply(replace(self.settings, **change))

    def _apply(self, candidate: Settings) -> None:
        """One recompute in core; on bad input say why and keep the previous state on screen."""
        try:
            if candidate.source == "article":
                comparison = article_experiment(candidate.seed, candidate.beta)
            else:
                rng = np.random.default_rng(candidate.seed)
                comparison = corrupt_and_compare(
                    self._patterns(candidate, rng),
                    candidate.target,
                    candidate.flips,
                    candidate.noise,
                    candidate.beta,
                    rng,
                )
            curve = weights_over_beta(comparison.modern_patterns, comparison.modern_query, BETAS)
        except ValueError as exc:
            self.show_message(str(exc))
            self._sync_controls()
            return
        self.clear_message()
        self.settings, self.comparison = candidate, comparison
        self._sync_controls()
        self._show(comparison, curve)

    def _patterns(self, s: Settings, rng: np.random.Generator) -> np.ndarray:
        if s.stored < 1:
            raise ValueError("Store at least one pattern: set Stored to 1 or more.")
        if s.source == "digits":
            if s.stored > len(self.digits):
                raise ValueError(f"There are {len(self.digits)} digit pictures; store at most that many.")
            return self.digits[: s.stored]
        return random_bipolar(s.stored, N, rng)

    def load_article(self) -> None:
        """The second article's experiment: seed 0, β = 1, its patterns and its queries."""
        self._apply(Settings(source="article", stored=9, target=0, flips=6, noise=0.3, beta=1.0, seed=0))

    def _sync_controls(self) -> None:
        """Make every control show the current (valid) settings."""
        s = self.settings
        self.source_box.blockSignals(True)
        self.source_box.setCurrentIndex(list(SOURCES).index(s.source))
        self.source_box.blockSignals(False)
        for widget, value in (
            (self.stored_spin, s.stored),
            (self.target_spin, s.target),
            (self.flips_spin, s.flips),
            (self.noise_slider, s.noise),
            (self.beta_slider, s.beta),
            (self.seed_spin, s.seed),
        ):
            set_quietly(widget, value)
        self.beta_edit.setText(f"{s.beta:.4g}")
        fixed = s.source == "article"
        for widget in (self.stored_spin, self.target_spin, self.flips_spin, self.noise_slider):
            widget.setEnabled(not fixed)

    # --- one recompute's results into the existing views ------------------------------------------
    def _show(self, c: Comparison, curve: np.ndarray) -> None:
        s, t = self.settings, c.target
        m_c, m_m = c.classical_patterns.shape[0], c.modern_patterns.shape[0]
        level = float(np.quantile(np.abs(c.modern_patterns), 0.95))  # 1 for ±1 patterns
        self._show_stored(self.classical_stored, c.classical_patterns, t, "±1 patterns")
        self._show_stored(self.modern_stored, c.modern_patterns, t, "patterns", level)
        states = c.classical.states[:, 0]  # (steps + 1, N)
        picks = list(range(min(len(states), PATH_PICTURES)))
        if len(states) > PATH_PICTURES:
            picks[-1] = len(states) - 1
        captions = ["query" if k == 0 else str(k) for k in picks]
        self.classical_path.set_patterns(
            np.vstack([states[picks], c.classical_patterns[t]]), [*captions, "target"]
        )
        self.modern_path.set_patterns(
            np.vstack([c.modern_query, c.modern.output[0], c.modern_patterns[t]]),
            ["query", "output", "target"],
            levels=(-level, level),
        )
        weights = c.modern.weights[0]
        self.modern_bars.set_weights(weights, t)
        self.beta_bars.set_weights(weights, t)
        self.classical_verdict.setText(self._classical_text(c))
        self.modern_verdict.setText(self._modern_text(c))
        source = "the article's draws (seed 0 reproduces it)" if s.source == "article" else f"seed {s.seed}"
        self.retrieve_note.setText(
            f"Query: stored pattern #{t} with {self._corruption(c)}; {source}. "
            f"The classical network holds {m_c} ±1 patterns in a {N} × {N} weight matrix; "
            f"the modern one keeps all {m_m} patterns and compares the query with each."
        )
        others = np.delete(curve, t, axis=1)
        self.target_curve.setData(BETAS, curve[:, t])
        self.other_curve.setData(BETAS, others.max(axis=1) if others.size else np.zeros(BETAS.size))
        self.beta_line.setValue(np.log10(s.beta))
        self.beta_pictures.set_patterns(
            np.vstack(
                [c.modern_query, c.modern_patterns.mean(axis=0), c.modern.output[0], c.modern_patterns[t]]
            ),
            ["query", "mean", "output", "target"],
            levels=(-level, level),
        )
        self.formula_note.setText(self._formula_text(c))

    def _show_stored(
        self, grid: PatternGrid, patterns: np.ndarray, target: int, kind: str, level: float = 1.0
    ) -> None:
        m = patterns.shape[0]
        shown = min(m, SHOWN)
        grid.set_title(f"{m} stored {kind}" + (f" (first {shown} drawn)" if m > shown else ""))
        grid.set_patterns(patterns[:shown], [f"#{i}" for i in range(shown)], (-level, level), target)

    def _corruption(self, c: Comparison) -> str:
        s = self.settings
        if s.source == "article":
            return "6 flipped pixels (classical) / noise σ = 0.3 added (modern)"
        noise = f" and noise σ = {num(s.noise)}" if s.noise > 0 else ""
        return f"{s.flips} flipped pixels{noise}"

    @staticmethod
    def _mark(ok: bool) -> str:
        return '<span style="color:#1a7f37">✔</span>' if ok else '<span style="color:#c62828">✘</span>'

    def _classical_text(self, c: Comparison) -> str:
        v, r = c.classical_verdict, c.classical
        ok = v.outcome is Outcome.RECOVERED
        if not r.converged[0]:
            return (
                f"{self._mark(False)} still changing after {MAX_STEPS} updates (a cycle): no resting state."
            )
        where = (
            "" if ok else f" Nearest stored pattern: #{v.nearest} (cosine {num(v.similarity[v.nearest])})."
        )
        updates = f"{r.steps} update" + ("" if r.steps == 1 else "s")
        return f"{self._mark(ok)} {v.outcome.value.capitalize()} after {updates}.{where}"

    def _modern_text(self, c: Comparison) -> str:
        v, w = c.modern_verdict, c.modern.weights[0]
        ok = v.outcome is Outcome.RECOVERED
        top = int(np.argmax(w))
        error = float(np.max(np.abs(c.modern.output[0] - c.modern_patterns[c.target])))
        return (
            f"{self._mark(ok)} {v.outcome.value.capitalize()} in one step: the largest weight is "
            f"{num(w[top], 3)} on #{top}; the worst entry is {num(error, 3)} away from the target "
            "(recovered means within 0.3 everywhere)."
        )

    def _formula_text(self, c: Comparison) -> str:
        s, m = self.settings, c.modern_patterns.shape[0]
        beta, d = s.beta, c.modern_patterns.shape[1]
        temperature = temperature_for_beta(beta, d)
        return (
            f"Attention divides scores by √d·T. With keys = values = the {m} stored patterns and the "
            f"query as Q, softmax(q·Kᵀ / (√{d}·T))·V is the modern update when "
            f"β = 1/(√d·T): here β = {beta:.4g} ⇔ T = 1/({beta:.4g}·{num(np.sqrt(d), 0)}) = "
            f"{temperature:.4g}. Plain attention (T = 1) is β = 1/√{d} = {num(1 / np.sqrt(d), 3)}. "
            "Small β: every pattern gets about the same weight and the output is near their mean. "
            "Large β: one pattern takes all the weight."
        )

    # --- capacity sweep in the background -------------------------------------------------------
    def run_sweep(self) -> None:
        """Start the capacity sweep with the current flips, β and seed, in the background."""
        if self.task is not None and not self.task.done:
            return
        s = self.settings
        flips = 6 if s.source == "article" else s.flips
        self.progress.setRange(0, 1)
        self.progress.setValue(0)
        self.run_button.setEnabled(False)
        self.cancel_button.setEnabled(True)
        self.task = worker.run_task(
            capacity_sweep,
            np.random.default_rng(s.seed),
            n=N,
            trials=self.trials_spin.value(),
            flips=flips,
            beta=s.beta,
            on_result=self._show_sweep,
            on_error=self.show_message,
            on_progress=self._on_progress,
            on_finished=self._sweep_finished,
        )

    def cancel_sweep(self) -> None:
        if self.task is not None:
            self.task.cancel()

    def _on_progress(self, done: int, total: int) -> None:
        self.progress.setRange(0, total)
        self.progress.setValue(done)

    def _sweep_finished(self) -> None:
        self.run_button.setEnabled(True)
        self.cancel_button.setEnabled(False)
        if self.task is not None and self.task.cancelled:
            self.show_message("Sweep cancelled; the plot keeps the last finished sweep.", "info")

    def _show_sweep(self, sweep: CapacitySweep) -> None:
        self.sweep = sweep
        self.clear_message()
        self.classical_curve.setData(sweep.loads, sweep.classical)
        self.modern_curve.setData(sweep.loads, sweep.modern)
        self.capacity_note.setText(
            f"{sweep.trials} trials per load, {sweep.flips} flipped pixels, β = {sweep.beta:.4g}. "
            f"At least 90% of queries come back exactly up to M = {sweep.reliable_load(sweep.classical)} "
            f"for the classical network (0.14·N = {num(sweep.classical_limit, 1)}) and up to "
            f"M = {sweep.reliable_load(sweep.modern)} for the modern one (largest load tried: "
            f"{int(sweep.loads[-1])})."
        )

    # --- lecture steps, smoke, export ---------------------------------------------------------------
    def show_step(self, i: int) -> None:
        self.pages.setCurrentIndex(self.PAGE_OF_STEP[i])
        if i == len(self.steps) - 1:
            self.load_article()

    def exercise(self) -> None:
        self.stored_spin.setValue(0)
        self.flips_spin.setValue(100)
        self.flips_spin.setValue(8)
        self.stored_spin.setValue(11)
        self.stored_spin.setValue(5)
        for text in ("0", "-1", "1e9", "abc", "0.125"):
            self.beta_edit.setText(text)
            self._on_beta_text()
        self.source_box.setCurrentIndex(1)
        self.stored_spin.setValue(200)
        self.target_spin.setValue(199)
        self.noise_slider.setValue(1.5)
        self.seed_spin.setValue(3)
        self.beta_slider.setValue(1e-3)
        self.beta_slider.setValue(1e2)
        super().exercise()
        self.attention_button.click()
        self.trials_spin.setValue(2)
        self.run_sweep()
        worker.wait_idle()
        self.source_box.setCurrentIndex(0)
        self.stored_spin.setValue(5)
        self.target_spin.setValue(3)
        self.set_beta(1.0)
        self.set_step(0)

    def export(self) -> dict[str, QWidget]:
        return {
            "classical stored": self.classical_stored,
            "classical path": self.classical_path,
            "modern path": self.modern_path,
            "weights": self.modern_bars,
            "beta curve": self.beta_plot,
            "capacity": self.capacity_plot,
        }
