"""Step 4: β is an inverse temperature: how the weights sharpen as β grows."""

from __future__ import annotations

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QHBoxLayout, QVBoxLayout, QWidget

from app.panels.memory import scripts
from app.panels.memory.retrieve import pattern_level
from app.panels.memory.state import BETAS, MemoryResult, N
from app.panels.scripts import Script
from app.panels.step import Live, Notice, Step
from app.widgets.pattern_grid import PatternGrid
from app.widgets.plots import plot
from app.widgets.text import note
from app.widgets.weight_bars import OTHER_COLOR, TARGET_COLOR, WeightBars
from core.maths.explain import num
from core.maths.hopfield import temperature_for_beta


def formula_text(r: MemoryResult) -> str:
    c, beta = r.comparison, r.state.beta
    m, d = c.modern_patterns.shape
    temperature = temperature_for_beta(beta, d)
    return (
        f"Attention divides scores by √d·T. With keys = values = the {m} stored patterns and the "
        f"query as Q, softmax(q·Kᵀ / (√{d}·T))·V is the modern update when "
        f"β = 1/(√d·T): here β = {beta:.4g} ⇔ T = 1/({beta:.4g}·{num(np.sqrt(d), 0)}) = "
        f"{temperature:.4g}. Plain attention (T = 1) is β = 1/√{d} = {num(1 / np.sqrt(d), 3)}. "
        "Small β: every pattern gets about the same weight and the output is near their mean. "
        "Large β: one pattern takes all the weight."
    )


class BetaPage(Step):
    def __init__(self, live: Live):
        super().__init__(live)
        self.formula_note = note(rich=True)
        self.beta_plot = plot("How the weights sharpen with β", "β", "weight", grid=False)
        self.beta_plot.setLogMode(x=True, y=False)
        self.beta_plot.setMouseEnabled(x=False, y=False)
        self.beta_plot.hideButtons()
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
        self.beta_bars = WeightBars("weights at this β", "stored pattern")
        row = QHBoxLayout()
        row.addWidget(self.beta_plot, 3)
        side = QVBoxLayout()
        side.addWidget(self.beta_pictures, 1)
        side.addWidget(self.beta_bars, 2)
        row.addLayout(side, 2)
        self.layout_with(self.formula_note, None, row)

    def views(self) -> dict[str, QWidget]:
        return {"beta_curve": self.beta_plot}

    def script(self) -> Script:
        return scripts.beta(self.state)

    def draw(self, r: MemoryResult) -> Notice:
        c, t = r.comparison, r.comparison.target
        others = np.delete(r.curve, t, axis=1)
        self.target_curve.setData(BETAS, r.curve[:, t])
        self.other_curve.setData(BETAS, others.max(axis=1) if others.size else np.zeros(BETAS.size))
        self.beta_line.setValue(np.log10(r.state.beta))
        level = pattern_level(c)
        self.beta_pictures.set_patterns(
            np.vstack(
                [c.modern_query, c.modern_patterns.mean(axis=0), c.modern.output[0], c.modern_patterns[t]]
            ),
            ["query", "mean", "output", "target"],
            levels=(-level, level),
        )
        self.beta_bars.set_weights(c.modern.weights[0], t)
        self.formula_note.setText(formula_text(r))
        return None
