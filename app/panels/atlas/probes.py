"""Step 2: the chosen head's weights on both probes, with the diagonals its scores average drawn
over them: the token before (and the first column) on the text, the earlier copy and the token
after it on the repeated random tokens."""

from __future__ import annotations

import html

import numpy as np
import pyqtgraph as pg
from PySide6.QtWidgets import QFormLayout, QWidget

from app.panels.atlas import scripts
from app.panels.atlas.state import AtlasResult
from app.panels.scripts import Script
from app.panels.step import Live, Notice, Step
from app.widgets import Heatmap
from app.widgets.reflow_grid import side_by_side
from app.widgets.spin_boxes import spin
from app.widgets.text import TextBox, note

PREVIOUS, COPY, AFTER = "#ff8c00", "#d62728", "#2ca02c"  # the diagonals' colours


def diagonal(view: Heatmap, color: str) -> pg.PlotCurveItem:
    line = pg.PlotCurveItem(pen=pg.mkPen(color, width=2, style=pg.QtCore.Qt.PenStyle.DashLine))
    line.setZValue(8)
    view.plot.addItem(line)
    return line


def through(line: pg.PlotCurveItem, rows: np.ndarray, offset: int) -> None:
    """Draw ``line`` through the centres of cells (t, t + offset) for t in ``rows``."""
    line.setData(rows + offset + 0.5, rows + 0.5)


class ProbesPage(Step):
    def __init__(self, live: Live):
        super().__init__(live)
        s = self.state
        self.text = self.bind(TextBox(s.text), "text")
        self.text.MAX_LINES = 8  # a paragraph: shown whole at large text too
        self.length = self.bind(spin(s.length, 0, 100_000), "length")
        self.seed = self.bind(spin(s.seed, 0, 2**31 - 1), "seed")
        self.low = self.bind(spin(s.low, 0, 10_000_000), "low")
        self.text_map = Heatmap("On the text", rows="query", cols="key", cell_text=False)
        self.repeat_map = Heatmap("On random tokens, repeated", rows="query", cols="key", cell_text=False)
        self.previous = diagonal(self.text_map, PREVIOUS)
        self.copy = diagonal(self.repeat_map, COPY)
        self.after = diagonal(self.repeat_map, AFTER)
        self.summary = note(rich=True)
        controls = QFormLayout()
        controls.addRow("Random tokens", self.length)
        controls.addRow("Seed", self.seed)
        controls.addRow("Ids from", self.low)
        self.layout_with(
            "The head's weights on each probe (rows: queries, columns: keys). Its scores are means of "
            "these weights: along the dashed diagonals (orange the token before, red the same token in "
            "the first copy, green the token after it, where an induction head looks), along the main "
            "diagonal (self) and down the first column (first token).",
            controls,
            side_by_side(self.text_map, self.repeat_map),
            (self.summary,),
            wide=(("Text", self.text),),
        )

    def views(self) -> dict[str, QWidget]:
        return {"on_text": self.text_map, "on_repeat": self.repeat_map}

    def script(self) -> Script:
        return scripts.probes(self.state)

    def draw(self, r: AtlasResult) -> Notice:
        a, layer, head, n = r.atlas, r.layer, r.head, r.atlas.n
        text = a.text_weights[layer, head].astype(np.float64)
        repeat = a.repeat_weights[layer, head].astype(np.float64)
        seen = (
            (lambda w: np.where(np.tril(np.ones_like(w)) > 0, w, np.nan))
            if r.model.is_causal
            else (lambda w: w)
        )
        self.text_map.set_data(seen(text), r.text_labels, r.text_labels, (0.0, 1.0))
        self.repeat_map.set_data(seen(repeat), r.repeat_labels, r.repeat_labels, (0.0, 1.0))
        self.text_map.set_title(f"Layer {layer + 1}, head {head + 1} on the text")
        self.repeat_map.set_title(f"Layer {layer + 1}, head {head + 1} on random tokens, repeated")
        through(self.previous, np.arange(1, len(r.text_labels)), -1)
        second = np.arange(n + 1, 2 * n + 1)
        through(self.copy, second, -n)
        through(self.after, second, -n + 1)
        for line in (self.copy, self.after):  # an encoder has no such scores to check by eye
            line.setVisible("induction" in a.scores)
        scores = a.scores
        on_repeat = (
            f"<b>duplicate token</b> {scores['duplicate_token'][layer, head]:.3f} and <b>induction</b> "
            f"{scores['induction'][layer, head]:.3f} on the second copy of the {n} random tokens (after "
            f"the first token, {html.escape(r.repeat_labels[0])})"
            if "induction" in scores
            else f"no duplicate-token or induction score on the random tokens: {a.missing['induction']}"
        )
        self.summary.setText(
            f"<b>Previous token</b> {scores['previous_token'][layer, head]:.3f}, <b>first token</b> "
            f"{scores['first_token'][layer, head]:.3f}, <b>self</b> {scores['self'][layer, head]:.3f} "
            f"on the text; {on_repeat}."
        )
        return None
