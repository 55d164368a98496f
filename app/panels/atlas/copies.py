"""Step 4: what the chosen head copies: its OV circuit (value, output projection, unembedding) fed one
token's embedding, its copying score, and the strongest directions of W_O W_V read as tokens."""

from __future__ import annotations

import html

from PySide6.QtWidgets import QFormLayout, QLineEdit

from app.panels.atlas import scripts
from app.panels.atlas.state import AtlasResult
from app.panels.scripts import Script
from app.panels.step import Live, Notice, Step
from app.widgets.reflow_grid import side_by_side
from app.widgets.tables import fill_table, text_table
from app.widgets.text import note

SHOWN = 4  # tokens named per direction


class CopiesPage(Step):
    def __init__(self, live: Live):
        super().__init__(live)
        self.token = self.bind(QLineEdit(self.state.token), "token")
        self.out = text_table(["writes", "logit"], row_labels=False)
        self.directions = text_table(["size", "reads", "writes"], row_labels=False)
        self.summary = note(rich=True)
        controls = QFormLayout()
        controls.addRow("The head reads", self.token)
        self.layout_with(
            "What a head moves is decided by its values and output projection, not by where it "
            "looks: feed it one token's embedding and read its output through the unembedding. A "
            "head that copies raises the very token it reads.",
            controls,
            side_by_side(self.out, self.directions),
            (self.summary,),
        )

    def script(self) -> Script:
        return scripts.copies(self.state)

    def draw(self, r: AtlasResult) -> Notice:
        ov = r.ov
        if ov is None:
            fill_table(self.out, [])
            fill_table(self.directions, [])
            self.summary.setText(f"Nothing to read out: {html.escape(r.unread, quote=False).rstrip('.')}.")
            return (r.notice, "warning") if r.notice else None
        fill_table(
            self.out, [[r.piece(t), f"{v:.3f}"] for t, v in zip(ov.out_tokens, ov.out_logits, strict=True)]
        )
        fill_table(
            self.directions,
            [
                [
                    f"{size:.3f}",
                    " ".join(r.piece(t) for t in reads[:SHOWN]),
                    " ".join(r.piece(t) for t in writes[:SHOWN]),
                ]
                for size, reads, writes in zip(ov.singular, ov.reads, ov.writes, strict=True)
            ],
        )
        score = r.atlas.scores["copying"][r.layer, r.head]
        self.summary.setText(
            f"Layer {r.layer + 1}, head {r.head + 1}: copying score <b>{score:.3f}</b> (1: every "
            f"eigenvalue of its OV circuit real and positive, a pure copier; −1: all real and negative, it "
            "lowers what it reads). "
            f"Reading {r.piece(ov.source)}, it raises {r.piece(ov.source)} to rank {ov.source_rank:,} of "
            f"{r.model.tokenizer.vocab_size:,}. Embedding and unembedding as stored, no norm between."
        )
        return (r.notice, "warning") if r.notice else None
