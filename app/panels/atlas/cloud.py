"""Step 3: the chosen head's queries and keys as one cloud (as AttentionViz draws them): every query
and key over both probes, projected together onto their two main directions. Hover a query to
join it to the keys it weighs most."""

from __future__ import annotations

from functools import cache, lru_cache

import numpy as np
import pyqtgraph as pg
from PySide6.QtWidgets import QCheckBox, QComboBox, QFormLayout, QWidget

from app.panels.atlas import scripts
from app.panels.atlas.state import COLOURS, AtlasResult
from app.panels.scripts import Script
from app.panels.step import Live, Notice, Step
from app.widgets.plots import legend_below, plot
from app.widgets.text import note

JOINED = 3  # keys a hovered query is joined to
GOLDEN = 0.618034  # spreads token ids over the hues
LEVELS = 256  # colours along a probe


# The scatter renders one picture per brush object it is given and keeps it: the same colour is
# one brush every time, so another head draws from pictures already made.
@cache
def position_brushes() -> tuple:
    """LEVELS brushes from the start of a probe (dark) to its end (yellow)."""
    colours = pg.colormap.get("viridis").map(np.linspace(0.0, 1.0, LEVELS), mode="qcolor")
    return tuple(pg.mkBrush(c) for c in colours)


@lru_cache(maxsize=4096)
def token_brush(token: int):
    return pg.mkBrush(pg.hsvColor((token * GOLDEN) % 1.0, 0.7, 0.9))


class CloudPage(Step):
    def __init__(self, live: Live):
        super().__init__(live)
        self.together = self.bind(QCheckBox("every head sharing these keys"), "together")
        self.colour = QComboBox()
        self.colour.addItems(list(COLOURS))
        self.bind(self.colour, "colour")
        self.view = plot("Queries and keys of the head", "first direction", "second direction")
        legend_below(self.view)
        self.queries = pg.ScatterPlotItem(size=8, symbol="o", pen=None, hoverable=True, name="queries")
        self.keys = pg.ScatterPlotItem(size=9, symbol="s", pen=pg.mkPen("#444444"), name="keys")
        self.lines = pg.PlotCurveItem(pen=pg.mkPen("#d62728", width=1.5), connect="pairs")
        for item in (self.lines, self.keys, self.queries):
            self.view.addItem(item)
        self.queries.sigHovered.connect(self._hovered)
        self.hovered = note()
        self.summary = note(rich=True)
        controls = QFormLayout()
        controls.addRow("Colour by", self.colour)
        controls.addRow(self.together)
        self.layout_with(
            "Each dot is one query (circles) or key (squares) of the head, from both probes. Keys are "
            "moved to the queries' centre and both scaled to one size, which leaves every weight as "
            "it was; then the cloud is flattened onto its two widest directions.",
            controls,
            self.view,
            (self.hovered, self.summary),
        )

    def views(self) -> dict[str, QWidget]:
        return {"cloud": self.view}

    def script(self) -> Script:
        return scripts.cloud(self.state)

    def _brushes(self, r: AtlasResult, rows: np.ndarray) -> list:
        c = r.cloud
        if self.state.colour == "token":
            ids = np.array(
                [
                    (r.atlas.text_ids, r.atlas.repeat_ids)[p][t]
                    for p, t in zip(c.probe, c.position, strict=True)
                ]
            )
            return [token_brush(int(i)) for i in ids[rows]]
        lengths = np.array([len(r.atlas.text_ids), len(r.atlas.repeat_ids)])
        where = c.position[rows] / np.maximum(lengths[c.probe[rows]] - 1, 1)
        brushes = position_brushes()
        return [brushes[k] for k in np.rint(where * (LEVELS - 1)).astype(int)]

    def draw(self, r: AtlasResult) -> Notice:
        c = r.cloud
        q, k = c.is_query, ~c.is_query
        self.queries.setData(
            pos=c.points[q], brush=self._brushes(r, np.flatnonzero(q)), data=np.flatnonzero(q)
        )
        self.keys.setData(pos=c.points[k], brush=self._brushes(r, np.flatnonzero(k)))
        self.lines.setData([], [])
        heads = sorted(set(c.head[q].tolist()))
        shared = f"heads {', '.join(str(h + 1) for h in heads)}" if len(heads) > 1 else f"head {heads[0] + 1}"
        self.summary.setText(
            f"Layer {r.layer + 1}, {shared}: {int(q.sum())} queries and {int(k.sum())} keys (key/value "
            f"head {int(c.head[k][0]) + 1}). Keys moved by a vector of size {np.linalg.norm(c.shift):.3g}; "
            f"queries × {c.scale:.3g}, keys ÷ {c.scale:.3g}."
        )
        self.hovered.setText("Hover a query to join it to the keys it weighs most.")
        return None

    def _hovered(self, _item, points, _event) -> None:
        """Join the query under the mouse to its top keys in its own probe."""
        if not len(points) or self.result is None:
            return
        r, c = self.result, self.result.cloud
        k = int(points[0].data())
        probe, position, head = int(c.probe[k]), int(c.position[k]), int(c.head[k])
        weights = (r.atlas.text_weights, r.atlas.repeat_weights)[probe][r.layer, head, position]
        top = np.argsort(-weights)[:JOINED]
        keys = np.flatnonzero(~c.is_query & (c.probe == probe))
        ends = c.points[keys[top]]
        pairs = np.repeat(c.points[k][None], len(top), 0)
        xy = np.stack([pairs, ends], 1).reshape(-1, 2)
        self.lines.setData(xy[:, 0], xy[:, 1])
        labels = (r.text_labels, r.repeat_labels)[probe]
        self.hovered.setText(
            f"Query {position + 1} {labels[position]} ({('text', 'repeated tokens')[probe]}, "
            f"head {head + 1}) "
            "weighs most: " + ", ".join(f"{t + 1} {labels[t]} {weights[t]:.2f}" for t in top)
        )
