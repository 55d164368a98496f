"""Step 3: what the head writes at the query, read through the frozen final norm and the
unembedding; and how much of the key's own token it copies, key by key."""

from __future__ import annotations

import numpy as np
from PySide6.QtWidgets import QHBoxLayout, QWidget

from app.panels.inside_head import scripts
from app.panels.inside_head.state import PartsResult
from app.panels.inside_head.views import PartsStep, counted_from_one
from app.panels.scripts import Script
from app.panels.step import Live, Notice
from app.widgets.reflow_grid import side_by_side
from app.widgets.tables import fill_table, text_table
from app.widgets.text import note
from app.widgets.weight_bars import WeightBars
from core.interp.token_text import visible
from core.maths.explain import num


class WritesPage(PartsStep):
    def __init__(self, live: Live):
        super().__init__(live)
        self.up = text_table(["pushed up", "logit"], row_labels=False)
        self.down = text_table(["pushed down", "logit"], row_labels=False)
        self.paths = WeightBars("Each key's value path on the key token", x_label="key position")
        self.paths.plot.setLabel("left", "logit change")
        self.summary = note(rich=True)
        tables = QHBoxLayout()
        tables.addWidget(self.up)
        tables.addWidget(self.down)
        lists = QWidget()
        lists.setLayout(tables)
        self.layout_with(
            "The head's output at the query (its weighted values through its slice of the "
            "output projection), read through the final norm, its scale frozen, and the "
            "unembedding: the tokens it pushes up and down. The bars split its push on the "
            "chosen key's token by the key each value came from.",
            None,
            side_by_side(lists, self.paths),
            notes=(self.summary,),
        )

    def views(self) -> dict[str, QWidget]:
        return {"value_paths": self.paths.plot}

    def script(self) -> Script:
        return scripts.writes(self.state, self.result.model.kind, self.why_not)

    def show(self, r: PartsResult) -> Notice:
        w = r.writes
        if w is None:
            for table in (self.up, self.down):
                fill_table(table, [])
            self.summary.setText(r.why_not)
            return (r.why_not, "warning")
        piece = r.model.tokenizer.decode
        for table, side in ((self.up, w.up), (self.down, w.down)):
            fill_table(table, [[visible(piece([t])), num(v, 3)] for t, v in side])
        self.paths.set_weights(w.paths, w.key)
        counted_from_one(self.paths)
        reach = float(np.abs(w.paths).max()) or 1.0
        self.paths.plot.setYRange(-reach * 1.05, reach * 1.05, padding=0)
        token = visible(piece([w.key_token]))
        self.summary.setText(
            f"Through key {w.key + 1} the head adds {num(w.copy, 3)} to the logit of {token}; its "
            f"whole output adds {num(w.whole, 3)} (rank {w.rank:,} among everything it pushes)."
        )
        return None
