"""Steps 1–4: one log-log plot of the sweep against n (time, throughput or memory), a curve per
implementation, slopes in the legend where they mean something (three lengths or more)."""

from __future__ import annotations

import pyqtgraph as pg
from PySide6.QtWidgets import QWidget

from app.panels.bench.state import BenchRun, legend_text
from app.panels.step import Live, Notice, Step
from app.theme import style_plots
from app.widgets.plots import plot
from core.bench.runners import IMPLEMENTATIONS

SYMBOLS = ("o", "s", "t", "d", "+", "x", "star", "h", "p")


class SweepPlotPage(Step):
    def __init__(self, live: Live, name: str, field: str, label: str, unit: str):
        super().__init__(live)
        self.field, self.named, self.legend_impls = field, name.lower(), ()
        self.plot = plot(f"{name} against sequence length (log-log)", "sequence length n", "")
        self.plot.setMenuEnabled(True)
        self.plot.setLogMode(x=True, y=True)
        self.plot.setLabel("left", label, units=unit or None)
        self.plot.getAxis("left").enableAutoSIPrefix(bool(unit))  # TFLOP/s stays in TFLOP/s
        self.legend = self.plot.addLegend(offset=(10, 10))
        self.curves: dict[str, pg.PlotDataItem] = {}
        for i, key in enumerate(IMPLEMENTATIONS):
            color = pg.intColor(i, hues=len(IMPLEMENTATIONS), values=1, maxValue=220)
            self.curves[key] = self.plot.plot(
                [], [], pen=pg.mkPen(color, width=2), symbol=SYMBOLS[i], symbolBrush=color, symbolSize=7
            )
        self.layout_with(None, None, self.plot, flush=True)

    def views(self) -> dict[str, QWidget]:
        return {self.named: self.plot}

    def draw(self, r: BenchRun) -> Notice:
        s = r.summary
        if s.impls != self.legend_impls:  # a new sweep: its implementations in the legend
            self.legend.clear()
            for key in s.impls:
                self.legend.addItem(self.curves[key], key)
            self.legend_impls = s.impls
            style_plots(self)  # the new legend labels take the theme's text colour
        points = s.points[self.field]
        for key, curve in self.curves.items():
            curve.setData(*points.get(key, ([], [])))
            if self.field in s.slopes and key in s.impls:
                self.legend.getLabel(curve).setText(legend_text(s, self.field, key))
        return None
