"""Step 4: the same tokens projected to d_k columns, with and without ÷ √d_k."""

from __future__ import annotations

import numpy as np
import pyqtgraph as pg
from PySide6.QtWidgets import QHBoxLayout, QLabel, QVBoxLayout, QWidget

from app.panels.scale import scripts
from app.panels.scale.state import HEAD_TOKENS, HEAD_WIDTHS, MAX_SEED, HeadsResult, HeadsState, compute_heads
from app.panels.scale.views import CEILING_ROOM, SECOND, add_plot, log_x, marker, uniform_line
from app.panels.scripts import Script
from app.panels.step import Live, Notice, Step
from app.widgets import Heatmap, LabelledSlider
from app.widgets.spin_boxes import spin
from app.widgets.text import note
from core.maths import explain, scaling


class HeadsPage(Step):
    def __init__(self):
        super().__init__(Live(HeadsState(), compute_heads))
        s = self.state
        self.drawn_sweep = None  # the sweep on screen, to redraw it only when the seed changes
        self.head_slider = self.bind(
            LabelledSlider(
                "dₖ", HEAD_WIDTHS[0], HEAD_WIDTHS[-1], s.d_k, log=True, integer=True, choices=HEAD_WIDTHS
            ),
            "d_k",
            int,
        )
        self.head_seed_spin = self.bind(spin(s.seed, 0, MAX_SEED), "seed")
        controls = QHBoxLayout()
        controls.addWidget(self.head_slider, 2)
        controls.addWidget(QLabel("Seed"))
        controls.addWidget(self.head_seed_spin)
        self.scaled_map = Heatmap("With ÷ √dₖ", colorbar=False)
        self.scaled_map.set_describer(lambda i, j: explain.weight(self.result.comparison.scaled, i, j))
        self.unscaled_map = Heatmap("Without scaling", colorbar=False)
        self.unscaled_map.set_describer(lambda i, j: explain.weight(self.result.comparison.unscaled, i, j))
        self.heads_view = pg.GraphicsLayoutWidget()
        self.heads_plot = add_plot(
            self.heads_view, "Mean entropy vs head width", "dₖ (log scale)", "nats", 0, 0
        )
        log_x(self.heads_plot, HEAD_WIDTHS)
        self.heads_plot.addLegend(offset=(10, -10))
        self.scaled_curve = self.heads_plot.plot(
            pen=pg.mkPen("#3d7bd9", width=2), symbol="o", symbolSize=6, name="with ÷ √dₖ"
        )
        self.unscaled_curve = self.heads_plot.plot(
            pen=pg.mkPen(SECOND, width=2), symbol="s", symbolSize=6, symbolBrush=SECOND, name="without"
        )
        self.heads_uniform = uniform_line()
        self.heads_plot.addItem(self.heads_uniform)
        self.heads_marker = marker()
        self.heads_plot.addItem(self.heads_marker)
        self.readout = note("")
        maps = QHBoxLayout()
        maps.addWidget(self.scaled_map, 1)
        maps.addWidget(self.unscaled_map, 1)
        views = QVBoxLayout()
        views.addLayout(maps, 1)
        views.addWidget(self.heads_view, 1)
        self.layout_with(
            f"The same {HEAD_TOKENS} tokens, projected to dₖ columns of W_Q and W_K "
            f"(d_model {scaling.D_MODEL}, so d_model / dₖ heads fit). Without the division the "
            "scores grow with dₖ and most rows of weights turn nearly one-hot.",
            controls,
            views,
            (self.readout,),
            on_top=True,
        )

    def views(self) -> dict[str, QWidget]:
        return {
            "weights_with_scaling": self.scaled_map,
            "weights_without_scaling": self.unscaled_map,
            "entropy_vs_head_width": self.heads_view,
        }

    def script(self) -> Script:
        return scripts.heads(self.state)

    def draw(self, r: HeadsResult) -> Notice:
        sweep, c = r.sweep, r.comparison
        if sweep is not self.drawn_sweep:  # cached per seed: new only when the seed changes
            self.drawn_sweep = sweep
            self.scaled_curve.setData(sweep.widths, sweep.entropy_scaled)
            self.unscaled_curve.setData(sweep.widths, sweep.entropy_unscaled)
            self.heads_uniform.setValue(sweep.max_entropy)
            self.heads_plot.setYRange(0, CEILING_ROOM * sweep.max_entropy, padding=0)
        labels = [str(i) for i in range(HEAD_TOKENS)]
        self.scaled_map.set_data(c.scaled.weights, labels, labels, levels=(0.0, 1.0))
        self.unscaled_map.set_data(c.unscaled.weights, labels, labels, levels=(0.0, 1.0))
        x = np.log10(c.d_k)
        self.heads_marker.setData([x, x], [c.entropy_scaled, c.entropy_unscaled])
        self.readout.setText(
            f"dₖ = {c.d_k}: {c.heads} head{'s' if c.heads > 1 else ''} of width {c.d_k} fill "
            f"d_model {r.d_model}. Mean entropy {c.entropy_scaled:.3f} nats with "
            f"÷ √{c.d_k}, {c.entropy_unscaled:.3f} without (uniform: ln {HEAD_TOKENS} = "
            f"{np.log(HEAD_TOKENS):.3f})."
        )
        return None
