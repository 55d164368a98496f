"""Step 2: the norm a layer reads the stream through, written out on the token's real stream;
the final norm also gives the logits."""

from __future__ import annotations

import numpy as np
import pyqtgraph as pg
from PySide6.QtWidgets import QWidget

from app.panels.scripts import Script
from app.panels.step import Live, Notice
from app.panels.stream import scripts
from app.panels.stream.state import StreamResult
from app.panels.stream.views import MOST, PENS, TokenStep, in_a_row
from app.widgets.plots import legend_below, plot
from app.widgets.spin_boxes import spin
from app.widgets.tables import fill_table, text_table
from app.widgets.text import note
from core.interp.stream import SCALED
from core.interp.token_text import visible


def quantities(r: StreamResult) -> list[tuple[str, float]]:
    """(name, value) of each step of the norm, as the table lists them."""
    n = r.norm
    rows = [("mean (taken away)", n.mean)] if n.kind == "LayerNorm" else []
    rows += [
        ("mean square", n.mean_square),
        ("eps", n.eps),
        ("scale 1/√(ms + eps)", n.scale),
        ("gain (mean)", float(n.gain.mean())),
        ("vs the model's own norm", n.module_error),
        (f"the stream ×{SCALED:g} changes it by", n.scaled_change),
    ]
    return rows + [(f"logit of {r.model.tokenizer.decode([t])!r}", v) for t, v in n.top]


class NormPage(TokenStep):
    def __init__(self, live: Live):
        super().__init__(live)
        self.layer = self.bind(spin(self.state.norm, 0, MOST), "norm")
        self.layer.setSpecialValueText("final")
        self.entries = plot("The stream, each dimension", "dimension", "value")
        legend_below(self.entries)
        self.scaled_curve = self.entries.plot(pen=pg.mkPen(PENS["leaving"], width=1), name="stream × scale")
        self.output_curve = self.entries.plot(
            pen=pg.mkPen(PENS["attention adds"], width=1), name="× gain: read"
        )
        self.table = text_table(["value"])
        self.working = note(rich=True)
        self.layout_with(
            "No layer reads the stream as it is: it divides it by its root mean square, then "
            "multiplies each dimension by a learned gain. So the stream's size never reaches the "
            "layer, only its direction. The final norm does the same before the unembedding.",
            self.controls(("Norm of layer", self.layer)),
            in_a_row((self.entries, 3), (self.table, 2)),
            (self.working,),
            wide=self.wide,
        )

    def views(self) -> dict[str, QWidget]:
        return {"norm": self.entries}

    def script(self) -> Script:
        return scripts.norm(self.state)

    def draw(self, r: StreamResult) -> Notice:
        n = r.norm
        dims = np.arange(n.stream.size)
        centred = n.stream - n.mean if n.kind == "LayerNorm" else n.stream
        self.scaled_curve.setData(dims, centred * n.scale)
        self.output_curve.setData(dims, n.output)
        names, values = zip(*quantities(r), strict=True)
        fill_table(self.table, [[f"{v:.4g}"] for v in values], names)
        final = n.layer == r.model.n_layers
        where = "The final norm" if final else f"The norm layer {n.layer + 1}'s attention reads through"
        centre = f"minus its mean {n.mean:.4g}, " if n.kind == "LayerNorm" else ""
        then = (
            f"then the unembedding: the largest logit is {n.top[0][1]:.4g}, for "
            f"{visible(r.model.tokenizer.decode([n.top[0][0]]))}."
            if final and n.top
            else ""
        )
        self.working.setText(
            f"{where} ({n.kind}): the stream {centre}has mean square {n.mean_square:.4g}; "
            f"× 1/√({n.mean_square:.4g} + {n.eps:g}) = × {n.scale:.4g}, then × the gain (mean "
            f"{n.gain.mean():.4g}). The model's own norm gives the same to {n.module_error:.1e}. "
            f"{SCALED:g} × the stream reads the same (it changes by {n.scaled_change:.1e}). {then}"
        )
        return (r.cut, "warning") if r.cut else None
