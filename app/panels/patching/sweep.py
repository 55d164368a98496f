"""What every sweeping step of the Patching panel shares: the direction switch, the progress of
the state's sweep with Cancel (a new pair cancels the old sweep and its cells go), and how grids
are drawn."""

from __future__ import annotations

import numpy as np
from PySide6.QtWidgets import QFormLayout, QHBoxLayout, QPushButton, QWidget

from app.panels.pair_step import direction_box
from app.panels.patching.state import PairResult
from app.panels.step import Live, Notice, Step
from app.widgets import Heatmap
from app.widgets.progress import RunProgress, show_runs
from app.widgets.token_bars import TokenBars
from core.interp.patching import Grid, PatchPair
from core.interp.token_text import visible


def grid_map(title: str, layers: bool = True) -> Heatmap:
    """A heatmap of normalised patching values: blue below 0, red towards 1 (the clean answer);
    with ``layers``, its rows are layers, numbered on an axis titled "layer" (show_grid)."""
    return Heatmap(title, signed=True, cell_text=False, axis_titles=("layer" if layers else "", ""))


def show_grid(
    view: Heatmap, grid: Grid | None, rows=None, columns=None, pair: PatchPair | None = None
) -> None:
    """``grid``'s normalised values (nan where not run yet) in ``view``; None clears it. When its
    columns are ``pair``'s positions, the axis names each by its token (the readout adds its
    number): the positions where the prompts differ and the last one first (the bright columns),
    by their number where the token does not fit, the others where their tokens fit."""
    if grid is None:
        view.clear()
        return
    ticks, key = None, None
    if pair is not None and columns is None and len(grid.columns) == pair.length:
        ticks = position_ticks(pair)
        key = {k: str(k + 1) for k in (*pair.differ, pair.length - 1)}
    rows = rows or grid.rows
    view.set_data(
        grid.values,
        rows,
        columns or grid.columns,
        (-1.0, 1.0),
        row_ticks=layer_numbers(rows),
        col_ticks=ticks,
        key_cols=key,
    )


def layer_numbers(rows: tuple[str, ...]) -> tuple[str, ...]:
    """Rows of layers by their numbers alone, the embeddings as 0, for a map whose axis is titled
    "layer" (narrower labels leave the cells more width); other rows as they are."""
    numbers = tuple("0" if row == "embeddings" else row.removeprefix("layer ") for row in rows)
    return numbers if all(n.isdigit() for n in numbers) else rows


def position_ticks(pair: PatchPair) -> list[str]:
    """Each position's token as a tick label, "clean/corrupted" where the two differ."""
    return [
        visible(a) if a == b else f"{visible(a)}/{visible(b)}"
        for a, b in zip(pair.clean_pieces, pair.corrupt_pieces, strict=True)
    ]


def show_top(view: TokenBars, top: list[tuple[str, float]]) -> None:
    view.set_bars(
        [visible(t) for t, _ in top], [p for _, p in top], [True] * len(top), 1 - sum(p for _, p in top)
    )


def beside(*widgets: QWidget, stretch: tuple[int, ...] = ()) -> QWidget:
    """``widgets`` in a row, sharing its width by ``stretch`` (equally without)."""
    row = QHBoxLayout()
    for i, w in enumerate(widgets):
        row.addWidget(w, stretch[i] if stretch else 0)
    box = QWidget()
    box.setLayout(row)
    return box


class SweepStep(Step):
    """A step that shows the exact grids its ``view`` sweeps (see state.PairState.wanted): the
    state's compute sweeps them while the step is on screen, cells landing in the result as they
    come; the progress bar and Cancel follow that compute."""

    view = ""  # by the subclass

    def __init__(self, live: Live):
        super().__init__(live)
        self.direction = self.bind(direction_box(), "direction")
        self.progress = RunProgress(
            "not swept", "%p%", "swept", "stopped", what="the exact sweep of this step's grids"
        )
        self.cancel_button = QPushButton("Cancel the sweep")
        show_runs(live, self.progress, self.cancel_button, when=self.is_current)

    def sweep_rows(self, form: QFormLayout) -> None:
        """The direction switch, the progress bar and Cancel, as rows of ``form``."""
        form.addRow("Direction", self.direction)
        row = QHBoxLayout()
        row.addWidget(self.progress, 1)
        row.addWidget(self.cancel_button)
        form.addRow(row)

    def show(self, r: PairResult) -> Notice:
        """Draw the grids of ``r`` (its view is this step's); by the subclass."""
        raise NotImplementedError

    def draw(self, r: PairResult) -> Notice:
        if r.state.view != self.view:  # another step's sweep: this one's follows when it is shown
            return self.later()
        if not r.missing:
            self.progress.finished()  # every grid there, also when another step swept it
        elif self.progress.state not in ("running", "stopped"):  # a cancel says where it stopped
            self.progress.idle()
        return self.show(r)

    def progress_text(self, grid: Grid | None) -> str:
        if grid is None:
            return "none yet"
        left = int(np.isnan(grid.raw).sum())
        return f"{grid.raw.size - left} of {grid.raw.size} cells" + ("" if left else " (done)")
