"""Step 3: the final stream as a sum of its parts (the embeddings, every attention and MLP output),
each part's size and its direct push on the most likely tokens' logits, grouped as chosen."""

from __future__ import annotations

import numpy as np
import pyqtgraph as pg
from PySide6.QtWidgets import QComboBox, QWidget

from app.panels.scripts import Script
from app.panels.step import Live, Notice
from app.panels.stream import scripts
from app.panels.stream.state import StreamResult
from app.panels.stream.views import PENS, TokenStep, in_a_row
from app.widgets import Heatmap
from app.widgets.plots import plot
from app.widgets.text import note
from core.interp.stream import GROUPS

GROUP_NAMES = {"part": "each part", "layer": "layer", "kind": "kind (attention, MLPs)"}


class PartsPage(TokenStep):
    def __init__(self, live: Live):
        super().__init__(live)
        self.group = QComboBox()
        for key in GROUPS:
            self.group.addItem(GROUP_NAMES[key], key)
        self.bind(self.group, "group")
        self.direct_map = Heatmap("Direct push on each top token's logit", signed=True, cols="token")
        self.sizes = plot("Size of each part", "norm", "")
        self.sizes.invertY(True)  # the first part on top, as in the map beside it
        self.bars = pg.BarGraphItem(x0=0, y=[], height=0.7, width=[], brush=PENS["leaving"], pen=None)
        self.sizes.addItem(self.bars)
        self.summary = note(rich=True)
        self.layout_with(
            "Nothing in the stream is ever overwritten, so the final stream is a plain sum: the "
            "embedding plus everything each attention layer and MLP wrote. Read through the final "
            "norm (its scale frozen), each part pushes the top tokens' logits up or down on its own.",
            self.controls(("Group by", self.group)),
            in_a_row((self.direct_map, 3), (self.sizes, 2)),
            (self.summary,),
            wide=self.wide,
        )

    def views(self) -> dict[str, QWidget]:
        return {"direct": self.direct_map, "part_sizes": self.sizes}

    def script(self) -> Script:
        return scripts.parts(self.state)

    def draw(self, r: StreamResult) -> Notice:
        g, e = r.groups, r.effects
        self.direct_map.set_data(g.values, list(g.names), list(r.top))
        norms = g.norms[:-1]  # the biases, the last row, are no vector of the stream
        self.bars.setOpts(y=np.arange(len(norms)), width=norms)
        self.sizes.setYRange(-0.5, len(g.names) - 0.5, padding=0)  # row by row beside the map
        ticks = [(k, name) for k, name in enumerate(g.names)][:: max(1, len(g.names) // 16)]
        self.sizes.getAxis("left").setTicks([ticks])
        best = np.argsort(-g.values[:-1, 0])[:2]
        pushes = " and ".join(f"{g.names[k]} ({g.values[k, 0]:+.3g})" for k in best)
        self.summary.setText(
            f"The parts add up to the real final stream to within {r.journey.sum_error:.1e}, and "
            f"their pushes (with the biases) to the logits: {r.top[0]} {e.logits[0]:.4g}, "
            f"{r.top[1]} {e.logits[1]:.4g}. The largest pushes on {r.top[0]}: {pushes}. {e.note}"
        )
        return (r.cut, "warning") if r.cut else None
