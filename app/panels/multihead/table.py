"""Step 2: per-head statistics: mean peak position, entropy, agreement with head 0 and uniform."""

from __future__ import annotations

import numpy as np
from PySide6.QtWidgets import QWidget

from app.panels.multihead import scripts
from app.panels.multihead.side_by_side import head_color
from app.panels.multihead.state import MultiHeadResult
from app.panels.scripts import Script
from app.panels.step import Live, Notice, Step
from app.widgets.tables import fill_table, text_table
from app.widgets.text import note

COLUMNS = (  # a word or two a line, so the table fits beside the controls on a projector, large text too
    "head",
    "mean\npeak\nposition",
    "mean\nentropy\n(nats)",
    "agreement\nwith\nhead 0",
    "agreement\nwith\nuniform",
)


class TablePage(Step):
    def __init__(self, live: Live):
        super().__init__(live)
        self.caption = note(
            "The per-head statistics: where each head looks on average, how spread its rows are, and how "
            "much its weights overlap with head 0's and with evenly spread weights."
        )
        self.table = text_table(COLUMNS, row_labels=False, size_columns=True)
        self.table_note = note()
        self.layout_with(self.caption, None, self.table, (self.table_note,), flush=True)

    def views(self) -> dict[str, QWidget]:
        return {"table": self.table}

    def script(self) -> Script:
        return scripts.stats(self.state)

    def draw(self, r: MultiHeadResult) -> Notice:
        t, h = r.table, len(r.trace.heads)
        columns = (t.mean_peak, t.mean_entropy, t.agreement_head0, t.agreement_uniform)
        rows = [
            [f"head {i}"] + [f"{c[i]:.4f}" if k else f"{c[i]:.3f}" for k, c in enumerate(columns)]
            for i in range(h)
        ]
        fill_table(self.table, rows)
        for i in range(h):
            self.table.item(i, 0).setForeground(head_color(i, h))
        n = len(r.tokens)
        self.table_note.setText(
            f"Mean entropy can reach at most ln({n}) = {np.log(n):.4f} (weights spread evenly over every "
            "key). Head 0's agreement with itself measures how concentrated it is; between different "
            "heads, compare the agreement with the uniform column, the level two unrelated heads reach."
        )
        return None
