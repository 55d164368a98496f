"""Step 2: feature maps: how near elu + 1, ReLU and m random features come to softmax's weights
on one row, and random features' error falling as m grows."""

from __future__ import annotations

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QComboBox, QFormLayout, QLineEdit, QVBoxLayout, QWidget

from app.panels.binding import set_quietly
from app.panels.linear import scripts
from app.panels.linear.state import FEATURE_COUNTS, FeatureResult, FeatureState, compute_features
from app.panels.scripts import Script
from app.panels.step import Live, Notice, Step
from app.widgets import LabelledSlider
from app.widgets.plots import count_ticks, legend_below, loglog_plot, plot
from app.widgets.quiet import quiet
from app.widgets.reflow_grid import side_by_side
from app.widgets.spin_boxes import spin
from app.widgets.text import note
from core.maths.linear import DRAWS, FEATURE_MAPS

COLORS = {"softmax": "#555555", "elu": "#3d7bd9", "relu": "#2ca02c", "favor": "#e07b00"}
NAMES = {"softmax": "softmax", **FEATURE_MAPS}
FLOOR = 1e-12  # errors drawn on the log axis are at least this


class FeaturesPage(Step):
    def __init__(self):
        super().__init__(Live(FeatureState(), compute_features))
        s = self.state
        self.text_edit = self.bind(QLineEdit(s.text), "text")
        self.d_k_spin = self.bind(spin(s.d_k, 0, 16), "d_k")
        self.seed_spin = self.bind(spin(s.seed, 0, 2**31 - 1), "seed")
        self.row_combo = QComboBox()  # the query row: its items follow the text
        self.row_combo.currentIndexChanged.connect(lambda i: i >= 0 and self.apply(row=i))
        self.temperature = self.bind(
            LabelledSlider("Temperature", 0.05, 20.0, s.temperature, log=True), "temperature", float
        )
        self.features_slider = self.bind(
            LabelledSlider("Features m", 8, 1024, s.features, log=True, decimals=0, choices=FEATURE_COUNTS),
            "features",
            int,
        )
        self.feature_seed_spin = self.bind(spin(s.feature_seed, 0, 2**31 - 1), "feature_seed")
        self.fill_rows()
        self.live.changed.connect(self.fill_rows)
        form = QFormLayout()
        form.addRow("Tokens", self.text_edit)
        form.addRow("d_k", self.d_k_spin)
        form.addRow("Seed", self.seed_spin)
        form.addRow("Query", self.row_combo)
        form.addRow("Feature seed", self.feature_seed_spin)
        self.error_note = note(rich=True)
        controls = QVBoxLayout()
        controls.addLayout(form)
        controls.addWidget(self.temperature)
        controls.addWidget(self.features_slider)
        controls.addWidget(self.error_note)
        controls.addStretch(1)
        self.bars_plot = plot("One query's weights", "key", "weight")
        legend_below(self.bars_plot)
        self.bars = {}
        for k, name in enumerate(NAMES):
            self.bars[name] = pg.BarGraphItem(
                x=[], height=[], width=0.2, brush=COLORS[name], name=NAMES[name]
            )
            self.bars_plot.addItem(self.bars[name])
            self.bars[name].offset = (k - 1.5) * 0.2
        self.curve_plot = loglog_plot(f"Mean |error| over {DRAWS} draws", "mean |weight error|", "features m")
        self.favor_curve = self.curve_plot.plot(
            pen=pg.mkPen(COLORS["favor"], width=2),
            symbol="o",
            symbolBrush=COLORS["favor"],
            name="random features",
        )
        count_ticks(self.curve_plot, FEATURE_COUNTS)
        self.map_lines = {
            name: self.curve_plot.plot(
                pen=pg.mkPen(COLORS[name], width=2, style=Qt.PenStyle.DashLine), name=NAMES[name]
            )
            for name in ("elu", "relu")
        }
        self.chosen = self.curve_plot.plot(
            pen=None,
            symbol="o",
            symbolSize=14,
            symbolBrush=None,
            symbolPen=pg.mkPen("#000000", width=2),
            name="this draw",
        )
        self.layout_with(
            "Random features estimate exp(q·k) itself, so with enough of them the weights come out as "
            "softmax's. Lower the temperature and the rows sharpen: the estimate needs far more features.",
            controls,
            side_by_side(self.bars_plot, self.curve_plot),
        )

    def views(self) -> dict[str, QWidget]:
        return {"row_weights": self.bars_plot, "feature_error": self.curve_plot}

    def script(self) -> Script:
        return scripts.features(self.state)

    def fill_rows(self) -> None:
        """The query choices follow the text at once, so a lesson can choose one before it is drawn."""
        r = self.result
        if [self.row_combo.itemText(i) for i in range(self.row_combo.count())] != r.tokens:
            with quiet(self.row_combo):
                self.row_combo.clear()
                self.row_combo.addItems(r.tokens)
        set_quietly(self.row_combo, r.tokens[r.row])

    def draw(self, r: FeatureResult) -> Notice:
        x = np.arange(len(r.tokens))
        for name, bars in self.bars.items():
            bars.setOpts(x=x + bars.offset, height=r.weights[name])
        self.bars_plot.getAxis("bottom").setTicks([list(enumerate(r.tokens))])
        self.bars_plot.setYRange(0, 1.02, padding=0)
        self.favor_curve.setData(
            FEATURE_COUNTS, np.maximum(r.curve, FLOOR)
        )  # a log axis: one token errs by 0
        ends = [FEATURE_COUNTS[0], FEATURE_COUNTS[-1]]
        for name, line in self.map_lines.items():
            line.setData(ends, [max(r.errors[name], FLOOR)] * 2)
        m = self.state.features
        self.chosen.setData([m], [max(r.errors["favor"], FLOOR)])
        self.error_note.setText(
            "<b>Mean |weight − softmax|</b> over every row: "
            + ", ".join(f"{NAMES[n]} {e:.3f}" for n, e in r.errors.items())
            + f" (m = {m}, this draw). Dashed: elu + 1 and ReLU, which have nothing to tune."
        )
        return None

    def exercise(self) -> None:
        self.temperature.setValue(0.05)
        self.temperature.setValue(20.0)
        self.features_slider.setValue(1024)
        self.text_edit.setText("")
        self.text_edit.setText("the cat sat down")
        self.row_combo.setCurrentIndex(3)
        self.d_k_spin.setValue(0)
        self.d_k_spin.setValue(4)
        self.feature_seed_spin.setValue(2)
        self.temperature.setValue(1.0)
        self.features_slider.setValue(64)
        self.row_combo.setCurrentIndex(1)
        self.feature_seed_spin.setValue(0)
