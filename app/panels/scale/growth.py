"""Step 2: the spread of q·k grows like √d_k, measured in the background; ÷ √d_k brings it to 1."""

from __future__ import annotations

import numpy as np
import pyqtgraph as pg
from PySide6.QtWidgets import QCheckBox, QHBoxLayout, QLabel, QProgressBar, QWidget

from app.panels.binding import set_quietly
from app.panels.scale import scripts
from app.panels.scale.state import (
    GUIDE_WIDTHS,
    GrowthView,
    Measured,
    MeasureState,
    check_growth_view,
    measure_growth,
)
from app.panels.scale.views import GUIDE, add_plot, log_x, marker
from app.panels.scripts import Script
from app.panels.step import Live, Notice, Step
from app.widgets import LabelledSlider
from app.widgets.spin_boxes import spin
from app.widgets.text import note
from core.maths import explain, scaling


class GrowthPage(Step):
    def __init__(self):
        super().__init__(Live(GrowthView(), check_growth_view))
        self.measure = self.follow(Live(MeasureState(), measure_growth, background=True))
        self.drawn_divide: bool | None = None  # the axes on screen: with or without ÷ √d_k
        s, widths = self.state, scaling.GROWTH_WIDTHS
        self.growth_slider = self.bind(
            LabelledSlider("dₖ", widths[0], widths[-1], s.d_k, log=True, integer=True, choices=widths),
            "d_k",
            int,
        )
        # Not bound: a huge count is capped here, before the measurement starts.
        self.samples_spin = spin(self.measure.state.samples, 0, 1_000_000_000, step=1000)
        self.samples_spin.valueChanged.connect(self.set_samples)
        self.divide_box = self.bind(QCheckBox("divide by √dₖ"), "divide")
        self.progress = QProgressBar()
        self.progress.setMaximumWidth(160)
        self.progress.setTextVisible(False)
        self.measure.progressed.connect(self._on_progress)
        self.measure.busy.connect(self.progress.setVisible)
        controls = QHBoxLayout()
        controls.addWidget(self.growth_slider, 2)
        controls.addWidget(QLabel("Samples"))
        controls.addWidget(self.samples_spin)
        controls.addWidget(self.divide_box)
        controls.addWidget(self.progress)

        self.view = pg.GraphicsLayoutWidget()
        self.growth_plot = add_plot(self.view, "", "dₖ (log scale)", "typical size of q·k", 0, 0)
        log_x(self.growth_plot, widths)
        self.growth_plot.addLegend(offset=(10, 10))
        self.reference_curve = self.growth_plot.plot(
            GUIDE_WIDTHS, np.sqrt(GUIDE_WIDTHS), pen=pg.mkPen(GUIDE, width=2)
        )
        self.measured_points = self.growth_plot.plot(
            [], [], pen=None, symbol="o", symbolSize=8, symbolBrush="#3d7bd9", name="measured std of q·k"
        )
        self.growth_marker = marker()
        self.growth_plot.addItem(self.growth_marker)
        self.growth_plot.legend.addItem(self.reference_curve, "√dₖ")
        self.readout = note(f"Measuring the spread with {self.measure.state.samples:,} samples per width…")
        self.layout_with(
            "Random q and k with unit-variance entries: their dot product sums dₖ terms, so its spread "
            "grows like √dₖ. Dividing by √dₖ brings it back to about 1 for every width.",
            controls,
            self.view,
            (self.readout,),
            on_top=True,
        )

    def views(self) -> dict[str, QWidget]:
        return {"growth": self.view}

    @property
    def growth(self) -> scaling.Growth | None:
        return None if self.measure.result is None else self.measure.result.growth

    def set_samples(self, requested: int) -> None:
        """Measure again with ``requested`` samples per width, capped where that would take too long."""
        try:
            samples, warning = scaling.capped_samples(requested)
        except ValueError as exc:
            self.tell(str(exc))
            return
        set_quietly(self.samples_spin, samples)
        self.readout.setText(f"Measuring the spread with {samples:,} samples per width…")
        self.measure.apply(samples=samples)
        self.tell(warning or "", "warning")

    def _on_progress(self, done: int, total: int) -> None:
        self.progress.setMaximum(total)
        self.progress.setValue(done)

    def script(self) -> Script:
        return scripts.growth(self.state, self.measure.state.samples)

    def draw(self, s: GrowthView) -> Notice:
        if s.divide != self.drawn_divide:  # the axes change only with the division
            self.drawn_divide = s.divide
            title = "Spread of q·k ÷ √dₖ stays near 1" if s.divide else "Spread of q·k grows like √dₖ"
            self.growth_plot.setTitle(title)
            self.growth_plot.setLabel("left", "spread of q·k / √dₖ" if s.divide else "spread of q·k")
            reference = np.ones_like(GUIDE_WIDTHS) if s.divide else np.sqrt(GUIDE_WIDTHS)
            self.reference_curve.setData(GUIDE_WIDTHS, reference)
            self.growth_plot.legend.getLabel(self.reference_curve).setText("1" if s.divide else "√dₖ")
            self.growth_plot.setYRange(0, 1.6 if s.divide else 34, padding=0)
        measured: Measured | None = self.measure.result
        if measured is None:
            return None
        g = measured.growth
        self.measured_points.setData(g.widths, g.spread_scaled if s.divide else g.spread)
        spread, scaled = g.at(s.d_k)
        self.growth_marker.setData([np.log10(s.d_k)], [scaled if s.divide else spread])
        self.readout.setText(
            f"dₖ = {s.d_k}: measured spread of q·k {explain.num(spread, 2)} "
            f"(√{s.d_k} = {explain.num(np.sqrt(s.d_k), 2)}); divided by √dₖ it is "
            f"{explain.num(scaled, 3)}.  {g.samples:,} samples per width."
        )
        return None
