"""What every step of the Patching panel shares: the direction switch, and exact sweeps in the
worker whose grids fill in as their cells finish (progress bar, Cancel; a new pair cancels the
old sweep, and the last grids stay until the new sweep has cells)."""

from __future__ import annotations

from functools import partial

import numpy as np
from PySide6.QtWidgets import QFormLayout, QHBoxLayout, QPushButton, QWidget

from app import worker
from app.panels.pair_step import direction_box
from app.panels.patching.state import PairResult, sweep
from app.panels.step import Notice, Step
from app.widgets import Heatmap
from app.widgets.progress import RunProgress
from app.widgets.token_bars import TokenBars
from core.interp.patching import Grid, PatchPair
from core.interp.prediction import visible

KEPT = 24  # whole grids kept for the steps to share


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
    """A step that shows exact grids (``wanted``) swept in the worker for the pair on screen."""

    def __init__(self, live, shared: dict | None = None):
        super().__init__(live)
        self.shared = {} if shared is None else shared  # (what, request) -> result, across steps
        self.direction = self.bind(direction_box(), "direction")
        self.progress = RunProgress(
            "not swept", "%p%", "swept", "stopped", what="the exact sweep of this step's grids"
        )
        self.cancel_button = QPushButton("Cancel the sweep")
        self.cancel_button.setEnabled(False)
        self.grids: dict[str, object] = {}  # what -> the newest Grid, AblationRanking or Attribution
        self.made_for: dict[str, tuple] = {}  # what -> the request its grid answers
        self.arriving: dict[str, object] = {}  # written by the worker, drawn at the next progress
        self.task: worker.Task | None = None
        self.asked: tuple = ()  # the request of the running sweep
        self.cancel_button.clicked.connect(self.cancel)

    def sweep_rows(self, form: QFormLayout) -> None:
        """The direction switch, the progress bar and Cancel, as rows of ``form``."""
        form.addRow("Direction", self.direction)
        row = QHBoxLayout()
        row.addWidget(self.progress, 1)
        row.addWidget(self.cancel_button)
        form.addRow(row)

    def wanted(self, r: PairResult) -> dict[str, tuple]:
        """what -> the request (pair, direction, head) its grid must answer; by the subclass."""
        raise NotImplementedError

    def show(self, r: PairResult) -> Notice:
        """Draw the grids there are (``self.grids``); by the subclass."""
        raise NotImplementedError

    def draw(self, r: PairResult) -> Notice:
        wanted = self.wanted(r)
        for what, key in wanted.items():  # swept whole by another step already
            if self.made_for.get(what) != key and (what, key) in self.shared:
                self.grids[what], self.made_for[what] = self.shared[what, key], key
        missing = {w: key for w, key in wanted.items() if self.made_for.get(w) != key}
        if missing and tuple(missing.items()) != self.asked:
            self.start(r, missing)
        elif not missing:
            self.progress.finished()  # every grid there, also when another step swept it
        return self.show(r)

    def start(self, r: PairResult, missing: dict[str, tuple]) -> None:
        if self.task is not None:
            self.task.cancel()
        self.asked = asked = tuple(missing.items())
        head = next((key[-1] for key in missing.values() if key[-1] is not None), None)
        self.progress.start()
        self.cancel_button.setEnabled(True)

        def keep(what: str, value) -> None:  # in the worker
            if self.asked == asked:
                self.arriving[what] = value

        def landed(out: dict) -> None:
            if self.asked != asked:
                return
            self.grids.update(out)
            self.made_for.update(missing)
            self.shared.update({(w, key): out[w] for w, key in missing.items()})
            while len(self.shared) > KEPT:
                self.shared.pop(next(iter(self.shared)))
            self.arriving.clear()
            self._redraw()

        def ended() -> None:
            if self.asked == asked:
                self.task, self.asked = None, ()
                self.cancel_button.setEnabled(False)
                self.progress.stopped()  # ended without its grids (an error); else already done

        self.task = worker.run_task(
            partial(sweep, r, tuple(missing), head, partial=keep),
            on_result=landed,
            on_error=self.tell,
            on_progress=self._progressed,
            on_finished=ended,
        )

    def _progressed(self, done: int, total: int) -> None:
        self.progress.progressed(done, total)
        if self.arriving:
            self.grids.update(self.arriving)
            self.arriving.clear()
            self._redraw()

    def _redraw(self) -> None:
        self.mark_stale()  # drawn now when on screen (the sweep is not started again)

    def cancel(self) -> None:
        if self.pause():
            self.tell("Sweep cancelled; the cells run so far stay on screen.", "info")

    def pause(self) -> bool:
        """Stop the running sweep; True if one ran. It starts again the next time the step is
        drawn (``mark_stale``)."""
        if self.task is None:
            return False
        self.task.cancel()
        self.asked, self.task = (), None
        self.cancel_button.setEnabled(False)
        self.progress.stopped()
        return True

    def progress_text(self, grid: Grid | None) -> str:
        if grid is None:
            return "Running…"
        left = int(np.isnan(grid.raw).sum())
        return f"{grid.raw.size - left} of {grid.raw.size} cells" + ("" if left else " (done)")
