"""Step 4: the top edges' scores against their exact effects (each edge patched alone), with the
diagonal where they would agree, and Spearman's rank correlation."""

from __future__ import annotations

import numpy as np
import pyqtgraph as pg
from PySide6.QtWidgets import QWidget

from app.panels.circuits import scripts
from app.panels.circuits.circuit import edge_text
from app.panels.circuits.state import CHECKED, CircuitResult, rank_agreement
from app.panels.scripts import Script
from app.panels.step import Live, Notice, Step
from app.widgets.plots import plot
from app.widgets.text import note


class ExactPage(Step):
    def __init__(self, live: Live):
        super().__init__(live)
        self.view = plot(f"The top {CHECKED} edges", "score (estimate)", "exact effect (patched alone)")
        self.diagonal = self.view.plot([], [], pen=pg.mkPen("#999999", width=1))
        self.points = pg.ScatterPlotItem(size=9, brush=pg.mkBrush("#1f77b4"), pen=None, hoverable=True)
        self.view.addItem(self.points)
        self.points.sigHovered.connect(self._hovered)
        self.hover = note()
        self.summary = note(rich=True)
        self.layout_with(
            "Each point is one edge: its score, from gradients, against the change of the normalised "
            "metric when that edge alone is patched. On the grey diagonal the estimate is exact.",
            None,
            self.view,
            (self.hover, self.summary),
        )

    def views(self) -> dict[str, QWidget]:
        return {"exact": self.view}

    def _hovered(self, _, points, __) -> None:
        if len(points):
            self.hover.setText(points[0].data())

    def script(self) -> Script:
        return scripts.exact(self.state)

    def draw(self, r: CircuitResult) -> Notice:
        if r.exact is None:
            self.points.setData([], [])
            self.diagonal.setData([], [])
            running = self.live.task is not None
            said = (
                f"Patching the top {CHECKED} edges one at a time…"
                if running
                else "Stopped before the edges were patched."
            )
            self.summary.setText(said)
            return None
        x, y = np.array([e.score for e in r.checked]), np.array(r.exact)
        texts = [f"{edge_text(r, e)}, exact {v:+.3f}" for e, v in zip(r.checked, r.exact, strict=True)]
        self.points.setData(x, y, data=texts)
        low, high = float(min(x.min(), y.min())), float(max(x.max(), y.max()))
        self.diagonal.setData([low, high], [low, high])
        far = int(np.argmax(np.abs(y - x)))
        self.summary.setText(
            f"Spearman's rank correlation <b>{rank_agreement(r):.2f}</b>. Furthest from the diagonal: "
            f"{texts[far]}."
        )
        return None
