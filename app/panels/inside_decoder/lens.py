"""Step 3: the logit lens, the prediction read after every layer."""

from __future__ import annotations

from collections import Counter

import numpy as np
from PySide6.QtWidgets import QFormLayout, QHBoxLayout, QLineEdit, QWidget

from app.panels.inside_decoder import scripts
from app.panels.inside_decoder.state import LensResult, LensState, compute_lens
from app.panels.scripts import Script
from app.panels.step import Live, Notice, Step
from app.widgets import Heatmap
from app.widgets.plots import plot
from app.widgets.text import note
from core.interp.token_text import visible

CELL_CHARS = 4  # characters of a top token written into its cell (hover shows all)
RANK_WIDTH = 190  # pixels of the rank plot beside the grid
BLANK_NAMES = {  # whitespace tokens: their names, one and several
    " ": ("a space", "spaces"),
    "\n": ("a line break", "line breaks"),
    "\t": ("a tab", "tabs"),
    "\u00a0": ("a no-break space", "no-break spaces"),
}


class LensPage(Step):
    def __init__(self):
        super().__init__(Live(LensState(), compute_lens, background=True))
        s = self.state
        self.prompt = self.bind(QLineEdit(s.prompt), "prompt")
        self.target = self.bind(QLineEdit(s.target), "target")
        self.summary = note()
        self.blank_note = note()  # why a cell reads "␣" alone: the top token is whitespace
        self.blank_note.hide()
        controls = QFormLayout()
        controls.addRow("Target", self.target)
        self.grid = Heatmap("Top token after each layer (colour: its probability)", max_cell_texts=4096)
        self.rank_plot = plot("Target's rank", "rank (1 = top)", "layer")
        self.rank_plot.setFixedWidth(RANK_WIDTH)
        self.rank_plot.setLogMode(x=True)
        self.rank_plot.invertY(True)  # layer 1 on top, as in the grid beside it
        self.rank_plot.setMouseEnabled(x=False, y=False)
        self.rank_line = self.rank_plot.plot(symbol="o", symbolSize=5)
        row = QHBoxLayout()
        row.addWidget(self.grid, 1)
        row.addWidget(self.rank_plot)
        views = QWidget()
        views.setLayout(row)
        self.layout_with(
            "After every layer the residual stream is read with the model's final norm and "
            "unembedding, as if the remaining layers did nothing. Rows are layers, columns are the "
            "prompt's tokens; each cell names the token predicted next from there (hover for all of it).",
            controls,
            views,
            (self.summary, self.blank_note),
            wide=(("Prompt", self.prompt),),
        )

    def views(self) -> dict[str, QWidget]:
        return {"lens": self.grid, "rank": self.rank_plot}

    def script(self) -> Script:
        return scripts.lens(self.state)

    def draw(self, r: LensResult) -> Notice:
        lens = r.lens
        layers = lens.top_ids.shape[0]
        texts = np.vectorize(lambda t: visible(t)[:CELL_CHARS], otypes=[object])(r.top_pieces)
        self.grid.set_data(
            lens.top_probs,
            [str(i + 1) for i in range(layers)],
            [visible(p) for p in r.prompt.pieces],
            (0.0, 1.0),
            texts=texts,
        )
        self.grid.set_describer(
            lambda i, j: (
                f"after layer {i + 1}, at {visible(r.prompt.pieces[j])}: "
                f"{named(r.top_pieces[i, j])} ({lens.top_probs[i, j]:.1%})"
            )
        )
        blank = blank_cells(r)
        self.blank_note.setText(blank)
        self.blank_note.setVisible(bool(blank))
        if lens.target_rank is None or r.target is None:
            self.rank_line.setData([], [])
            self.summary.setText(r.refused or "Name a target to follow its rank layer by layer.")
            return (r.refused, "warning") if r.refused else None
        self.rank_line.setData(lens.target_rank.astype(float), np.arange(1, layers + 1))
        formed = lens.formed_at()
        name = visible(r.target.text)
        where = (
            f"{name} is the top prediction from layer {formed + 1} on."
            if formed is not None
            else f"{name} is not the model's top prediction here (rank {lens.target_rank[-1]} at the end)."
        )
        half = layers // 2
        self.summary.setText(
            f"{where} Its probability after the last layer: {lens.target_prob[-1]:.1%}; after "
            f"layer {half}: {lens.target_prob[half - 1]:.2%} (rank {lens.target_rank[half - 1]})."
        )
        return None


def blank_name(piece: str) -> str | None:
    """What a whitespace-only token is ("a space", "3 spaces", "a line break", "whitespace"), or
    None for a token with anything else in it (or none)."""
    if not piece or piece.strip():
        return None
    names = BLANK_NAMES.get(piece[0])
    if names is None or piece != piece[0] * len(piece):
        return "whitespace only"
    return names[0] if len(piece) == 1 else f"{len(piece)} {names[1]}"


def named(piece: str) -> str:
    """A token as the grid shows it, with what a whitespace-only one is: "␣ (a space token)"."""
    name = blank_name(piece)
    return visible(piece) if name is None else f"{visible(piece)} ({name}, a token of its own)"


def layer_runs(layers: list[int]) -> str:
    """Layer numbers (from 1, ascending) as runs: "7–23, 25"."""
    runs: list[list[int]] = []
    for layer in layers:
        if runs and layer == runs[-1][-1] + 1:
            runs[-1].append(layer)
        else:
            runs.append([layer])
    return ", ".join(f"{run[0]}–{run[-1]}" if len(run) > 1 else f"{run[0]}" for run in runs)


def blank_cells(r: LensResult) -> str:
    """A note on the cells whose top token is whitespace only: they read "␣" (or "↵") alone, which
    looks like an empty prediction, and a bare space can top the middle layers at up to 99 %.
    Where at the last position, the one the summary follows; "" when no cell has one."""
    pieces, probs = r.top_pieces, r.lens.top_probs
    blank = np.vectorize(lambda p: blank_name(p) is not None, otypes=[bool])(pieces)
    if not blank.any():
        return ""
    counts = Counter(pieces[blank])  # each whitespace token, the most frequent first
    what = "; ".join(f"{visible(piece)} alone is {blank_name(piece)}" for piece, _ in counts.most_common())
    last = blank[:, -1]
    if last.any():
        layers = layer_runs([int(i) + 1 for i in np.flatnonzero(last)])
        where = (
            f"At the last position ({visible(r.prompt.pieces[-1])}) such a token is the top one after "
            f"layer{'s' if last.sum() > 1 else ''} {layers}, at up to {probs[:, -1][last].max():.1%}"
        )
        others = int(blank[:, :-1].sum())
        where += f"; elsewhere in {others} more cell{'s' if others != 1 else ''}." if others else "."
    else:
        where = f"Such a token tops {int(blank.sum())} cells, at up to {probs[blank].max():.1%}."
    return f"{what}: a token of whitespace only, not an empty prediction. {where}"
