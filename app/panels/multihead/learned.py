"""Step 4: what heads learn. The same heads view, read as random heads that learned nothing."""

from __future__ import annotations

from app.panels.multihead.side_by_side import HeadsPage


class LearnedPage(HeadsPage):
    NAMED = "learned_"  # its exported views' names begin with it
    CAPTION = (
        "These weights are random, so the heads differ only by chance and have learned nothing. "
        "Trained heads specialise: previous-token heads, heads that gather on separators, heads that "
        "link a pronoun to its noun. The real-model panel shows them."
    )
