"""Step 3: the divisor becomes √d_k·T; a per-token table of peaks and entropies, and a sweep."""

from __future__ import annotations

import numpy as np
import pyqtgraph as pg
from PySide6.QtWidgets import QComboBox, QFormLayout, QVBoxLayout, QWidget

from app.panels.binding import set_quietly
from app.panels.scale import scripts
from app.panels.scale.state import (
    ARTICLE_TEMPERATURES,
    MAX_SEED,
    TemperatureResult,
    TemperatureState,
    compute_temperature,
)
from app.panels.scale.views import CEILING_ROOM, add_plot, log_x, marker, uniform_line
from app.panels.scripts import Script
from app.panels.step import Live, Notice, Step
from app.widgets import Heatmap, LabelledSlider
from app.widgets.spin_boxes import spin
from app.widgets.tables import fill_table, text_table
from app.widgets.text import note
from core.maths import explain, scaling


class TemperaturePage(Step):
    def __init__(self):
        super().__init__(Live(TemperatureState(), compute_temperature))
        s = self.state
        self.drawn_curve = None  # the sweep on screen, to redraw it only when the tokens change
        self.preset_combo = QComboBox()
        self.preset_combo.addItems([p.name for p in scaling.PRESETS] + ["Custom"])
        self.preset_combo.currentIndexChanged.connect(self._on_preset)
        self.live.changed.connect(
            lambda: set_quietly(self.preset_combo, self.preset_combo.itemText(self.result.preset))
        )
        self.tokens_spin = self.bind(spin(s.n_tokens, 0, scaling.MAX_TOKENS), "n_tokens")
        self.d_k_spin = self.bind(spin(s.d_k, 0, scaling.MAX_WIDTH), "d_k")
        self.seed_spin = self.bind(spin(s.seed, 0, MAX_SEED), "seed")
        self.temperature_slider = self.bind(
            LabelledSlider("Temperature T", 0.05, 20.0, s.temperature, log=True), "temperature", float
        )
        form = QFormLayout()
        form.addRow("Preset", self.preset_combo)
        form.addRow("Tokens", self.tokens_spin)
        form.addRow("dₖ", self.d_k_spin)
        form.addRow("Seed", self.seed_spin)
        self.token_table = text_table(
            ["Query", "Peak\nkey", "Max\nweight", "Entropy\n(nats)"], row_labels=False, size_columns=True
        )
        self.sweep_table = text_table(
            ["T", "Mean\nentropy", "Mean max\nweight"], row_labels=False, size_columns=True
        )
        self.summary = note("")
        left = QVBoxLayout()
        left.addLayout(form)
        left.addWidget(self.token_table, 3)
        self.sweep_label = note("")
        left.addWidget(self.sweep_label)
        left.addWidget(self.sweep_table, 2)

        self.temperature_map = Heatmap("Weights at temperature T", colorbar=False)
        self.temperature_map.set_describer(lambda i, j: explain.weight(self.result.reading.trace, i, j))
        self.entropy_view = pg.GraphicsLayoutWidget()
        self.entropy_plot = add_plot(
            self.entropy_view, "Mean entropy vs temperature", "temperature T (log scale)", "nats", 0, 0
        )
        log_x(self.entropy_plot, (0.05, 0.2, 1, 5, 20))
        self.entropy_curve = self.entropy_plot.plot(pen=pg.mkPen("#3d7bd9", width=2))
        self.uniform_line = uniform_line()
        self.entropy_plot.addItem(self.uniform_line)
        self.entropy_marker = marker()
        self.entropy_plot.addItem(self.entropy_marker)
        right = QVBoxLayout()
        right.addWidget(self.temperature_slider)
        right.addWidget(self.summary)
        right.addWidget(self.temperature_map, 3)
        right.addWidget(self.entropy_view, 2)
        self.layout_with(
            "The divisor becomes √dₖ·T. Small T: each query all but picks one key. Large T: the weights "
            "flatten towards 1/n and the entropy towards ln n.",
            left,
            right,
        )

    def views(self) -> dict[str, QWidget]:
        return {"temperature_weights": self.temperature_map, "entropy_vs_temperature": self.entropy_view}

    def _on_preset(self, index: int) -> None:
        if index < len(scaling.PRESETS):  # "Custom" changes nothing
            p = scaling.PRESETS[index]
            self.apply(n_tokens=p.n_tokens, d_k=p.d_k, seed=p.seed)

    def script(self) -> Script:
        return scripts.temperature(self.state)

    def draw(self, r: TemperatureResult) -> Notice:
        if r.curve is not self.drawn_curve:  # cached per tokens: new only when they change
            self.drawn_curve = r.curve
            self.entropy_curve.setData(r.curve.temperatures, r.curve.mean_entropy)
            self.uniform_line.setValue(r.curve.max_entropy)
            self.entropy_plot.setYRange(0, CEILING_ROOM * r.curve.max_entropy, padding=0)
            rows = [
                (f"{t:.2f}", f"{r.article.mean_entropy[k]:.4f}", f"{r.article.mean_peak[k]:.4f}")
                for k, t in enumerate(ARTICLE_TEMPERATURES)
            ]
            fill_table(self.sweep_table, rows)
            s = self.state
            named = r.preset < len(scaling.PRESETS)
            tokens = (
                scaling.PRESETS[r.preset].name if named else f"{s.n_tokens} tokens, dₖ {s.d_k}, seed {s.seed}"
            )
            self.sweep_label.setText(f"Computed here for “{tokens}”, at the article's five temperatures")
        reading = r.reading
        n = reading.weights.shape[0]
        labels = [str(i) for i in range(n)]
        self.temperature_map.set_data(reading.weights, labels, labels, levels=(0.0, 1.0))
        fill_table(
            self.token_table,
            [
                (
                    str(i),
                    str(reading.peak_index[i]),
                    f"{reading.peak_weight[i]:.3f}",
                    f"{reading.entropy[i]:.3f}",
                )
                for i in range(n)
            ],
        )
        self.entropy_marker.setData([np.log10(reading.temperature)], [reading.mean_entropy])
        self.summary.setText(
            f"T = {reading.temperature:.2f}: mean entropy {reading.mean_entropy:.4f} nats "
            f"(uniform: ln {n} = {reading.max_entropy:.4f}); mean max weight "
            f"{reading.mean_peak:.4f} (uniform: 1/{n} = {1 / n:.4f})."
        )
        return None
