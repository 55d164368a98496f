"""Step 4: every head's and MLP's direct share of logit(target) − logit(foil) at the last position
(the final norm's scale frozen), beside the knockout ranking (each head's total effect)."""

from __future__ import annotations

import numpy as np
from PySide6.QtWidgets import QCheckBox, QLabel, QLineEdit, QPushButton, QWidget

from app.panels.inside_head import scripts
from app.panels.inside_head.state import PartsResult
from app.panels.inside_head.views import PartsStep
from app.panels.scripts import Script
from app.panels.step import Live, Notice
from app.widgets import Heatmap
from app.widgets.progress import RunProgress, show_runs
from app.widgets.reflow_grid import ReflowGrid, side_by_side
from app.widgets.sizing import WholeText
from app.widgets.text import note
from core.interp.token_text import visible
from core.maths.explain import num


def _symmetric(values: np.ndarray) -> tuple[float, float]:
    reach = float(np.nanmax(np.abs(values))) if np.isfinite(values).any() else 0.0
    return (-(reach or 1.0), reach or 1.0)


class DirectPage(PartsStep):
    def __init__(self, live: Live):
        super().__init__(live)
        self.target = self.bind(QLineEdit(self.state.target), "target")
        self.foil = self.bind(QLineEdit(self.state.foil), "foil")
        for field in (self.target, self.foil):
            WholeText(field)
        self.knockout = self.bind(QCheckBox("Knock out each head"), "knockout")
        self.cancel = QPushButton("Cancel")
        self.progress = RunProgress(
            "not run yet",
            "layer %v of %m",
            "every head knocked out",
            "stopped at layer %v",
            "not run for these settings",
            what="the knock-out runs, one per layer, that fill the map on the right",
        )
        self.summary = note(rich=True)
        labels = QLabel("Target"), QLabel("Foil")
        wide = [(labels[0], 0, 0, 1), (self.target, 0, 1, 1), (labels[1], 0, 2, 1), (self.foil, 0, 3, 1)]
        wide += [(self.knockout, 0, 4, 1), (self.progress, 0, 5, 1), (self.cancel, 0, 6, 1)]
        narrow = [(labels[0], 0, 0, 1), (self.target, 0, 1, 1), (labels[1], 1, 0, 1), (self.foil, 1, 1, 1)]
        narrow += [(self.knockout, 2, 0, 2), (self.progress, 3, 0, 1), (self.cancel, 3, 1, 1)]
        self.direct_map = Heatmap("Direct share", signed=True, cell_text=False, rows="layer", cols="head")
        self.total_map = Heatmap(
            "Drop when knocked out", signed=True, cell_text=False, rows="layer", cols="head"
        )
        self.layout_with(
            "What each head and MLP adds straight to logit(target) − logit(foil) at the last "
            "token, read through the final norm with its scale frozen: the shares add up to the "
            "real difference. Beside it, knocking each head out measures its total effect, "
            "through the later heads too.",
            ReflowGrid(wide, narrow, stretch=(5, 1)),
            side_by_side(self.direct_map, self.total_map),
            notes=(self.summary,),
            on_top=True,
        )
        show_runs(live, self.progress, self.cancel, when=lambda: live.wanted.knockout)

    def views(self) -> dict[str, QWidget]:
        return {"direct": self.direct_map, "knockout": self.total_map}

    def script(self) -> Script:
        return scripts.direct(self.state, self.result.model.kind, self.why_not)

    def show(self, r: PartsResult) -> Notice:
        d = r.direct
        if d is None:
            self.direct_map.clear()
            self.total_map.clear()
            why = r.why_not or r.unanswered or "Name a target and a foil token, e.g. Mary and John."
            self.summary.setText(why)
            return (why, "warning") if r.why_not or r.unanswered else None
        layers, heads = d.heads.shape
        grid = np.column_stack([d.heads, d.mlps])
        columns = [str(h + 1) for h in range(heads)] + ["MLP"]
        rows = [str(k + 1) for k in range(layers)]
        self.direct_map.set_data(grid, rows, columns, _symmetric(grid))
        if r.knocked is not None:
            drop = np.column_stack([r.knocked.drop, np.full(layers, np.nan)])
            self.total_map.set_data(drop, rows, columns, _symmetric(drop))
            self.progress.finished()
        else:  # the right shape, empty, until the box is ticked
            self.total_map.set_data(np.full(grid.shape, np.nan), rows, columns, (-1.0, 1.0))
            if self.progress.state not in ("running", "stopped"):  # a cancel says where it stopped
                self.progress.idle()
        rest = [(n, v) for n, v in zip(d.names, d.values, strict=True) if not n.startswith("L")]
        best = np.unravel_index(np.nanargmax(np.abs(grid)), grid.shape)
        where = "MLP" if best[1] == heads else f"head {best[1] + 1}"
        self.summary.setText(
            f"logit({visible(r.target.text)}) − logit({visible(r.foil.text)}) = "
            f"<b>{num(d.logit_difference, 3)}</b>; the shares add to {num(d.values.sum(), 3)}.<br>"
            + ", ".join(f"{n} {num(v, 3)}" for n, v in rest)
            + f"<br>Largest: layer {best[0] + 1} {where}, {num(grid[best], 3)}."
            + ("" if r.knocked else "<br>Tick the box to knock each head out (one run per layer).")
        )
        return (" ".join(r.notices), "warning") if r.notices else None
