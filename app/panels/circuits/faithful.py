"""Step 3: how much of the clean answer a circuit of N edges keeps, every other edge fed from the
corrupted run, for EAP and EAP-IG side by side; the N on the slider marked."""

from __future__ import annotations

import math

import pyqtgraph as pg
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QWidget

from app.panels.circuits import scripts
from app.panels.circuits.state import CircuitResult, smallest_above
from app.panels.scripts import Script
from app.panels.step import Live, Notice, Step
from app.widgets.plots import legend_below, plot
from app.widgets.text import note

COLOURS = {"eap": "#1f77b4", "eap-ig": "#ff7f0e"}
NAMES = {"eap": "EAP", "eap-ig": "EAP-IG"}


class FaithfulPage(Step):
    def __init__(self, live: Live):
        super().__init__(live)
        self.view = plot("Faithfulness", "edges in the circuit (log scale)", "fraction of the clean metric")
        self.view.setLogMode(x=True, y=False)
        legend_below(self.view)
        self.curves = {
            m: self.view.plot(
                [], [], pen=pg.mkPen(c, width=2), symbol="o", symbolSize=6, symbolBrush=c, name=NAMES[m]
            )
            for m, c in COLOURS.items()
        }
        self.marker = pg.InfiniteLine(angle=90, pen=pg.mkPen("#555555", style=Qt.PenStyle.DashLine))
        self.view.addItem(self.marker)
        self.summary = note(rich=True)
        self.layout_with(
            "Run the clean prompt with every edge outside the circuit carrying its sender's output from "
            "the corrupted run instead. 0 is the corrupted run's metric, 1 the clean run's; with no "
            "edges the answer is the corrupted one, with all of them the clean one.",
            None,
            self.view,
            (self.summary,),
        )

    def views(self) -> dict[str, QWidget]:
        return {"faithfulness": self.view}

    def script(self) -> Script:
        return scripts.faithfulness(self.state)

    def draw(self, r: CircuitResult) -> Notice:
        self.marker.setPos(math.log10(max(r.state.edges, 1)))  # the axis is log10(N)
        if r.curves is None:
            for curve in self.curves.values():
                curve.setData([], [])
            running = self.live.task is not None
            self.summary.setText(
                "Measuring the curves…" if running else "Stopped before the curves were measured."
            )
            return None
        lines = []
        for method, points in r.curves.items():
            kept = [(n, rec) for n, rec in points if n > 0]  # a log axis has no 0: that point is said below
            self.curves[method].setData([n for n, _ in kept], [rec for _, rec in kept])
            at = smallest_above(points)
            reached = "none of the sizes measured" if at is None else f"<b>{at}</b> edges"
            lines.append(f"{NAMES[method]} keeps 80 % from {reached}")
        self.summary.setText(
            "; ".join(lines) + f". The dashed line is the circuit on the slider ({r.state.edges} edges); "
            "with 0 edges both curves start at 0."
        )
        return None
