"""Step 4: every head's output patched at every position (layers × heads), beside the knockout
ranking; for a chosen head, its output, query, key, value and pattern by position."""

from __future__ import annotations

import numpy as np
from PySide6.QtCore import Signal
from PySide6.QtWidgets import QFormLayout, QPushButton, QVBoxLayout, QWidget

from app.panels.patching import scripts
from app.panels.patching.state import PairResult
from app.panels.patching.sweep import SweepStep, beside, grid_map, show_grid
from app.panels.scripts import Script
from app.panels.step import Live, Notice
from app.widgets.text import note

LISTED = 5


def top_heads(scores: np.ndarray, k: int = LISTED) -> list[tuple[int, int]]:
    """The ``k`` (layer, head) with the largest scores, largest first (nan counts as none)."""
    flat = np.nan_to_num(scores, nan=-np.inf).ravel()
    order = np.argsort(-flat)[:k]
    return [(int(i // scores.shape[1]), int(i % scores.shape[1])) for i in order if np.isfinite(flat[i])]


def named(heads: list[tuple[int, int]]) -> str:
    return ", ".join(f"L{layer + 1} H{head + 1}" for layer, head in heads) or "none yet"


class HeadsPage(SweepStep):
    open_head = Signal(dict)  # the chosen head as a cell of Inside a head

    def __init__(self, live: Live, shared: dict | None = None):
        super().__init__(live, shared)
        self.head: tuple[int, int] | None = None  # chosen by a click; else the best by patching
        self.heads_map = grid_map("Head outputs", layers=False)
        self.knock_map = grid_map("Knockout", layers=False)
        self.head_map = grid_map("One head", layers=False)
        self.status = note()
        self.compare = note(rich=True)
        controls = QFormLayout()
        self.sweep_rows(controls)
        self.inside_button = QPushButton("Inside the chosen head…")
        self.inside_button.setToolTip("the chosen head in the Inside a head panel, on the clean prompt")
        controls.addRow(self.inside_button)
        views = QWidget()
        column = QVBoxLayout(views)
        column.setContentsMargins(0, 0, 0, 0)
        column.addWidget(beside(self.heads_map, self.knock_map), 3)
        column.addWidget(self.head_map, 2)
        self.layout_with(
            "Each head's output copied in at every position, beside how much knocking it out of the "
            "clean run lowers the answer (drop / clean). Click a head: its output, query, key, "
            "value and pattern patched position by position.",
            controls,
            views,
            (self.status, self.compare),
        )
        self.heads_map.clicked.connect(self.choose)
        self.knock_map.clicked.connect(self.choose)
        self.inside_button.clicked.connect(self._open_inside)

    def _open_inside(self) -> None:
        """The chosen head on the clean prompt, from the last token to the first changed one."""
        r = self.result
        head = None if r is None else self.chosen(r)
        if head is not None:
            cell = {"layer": head[0] + 1, "head": head[1] + 1, "query": 0, "key": r.pair.differ[0] + 1}
            self.open_head.emit({"source": r.state.source, "prompt": r.state.clean, **cell})

    def choose(self, layer: int, head: int) -> None:
        self.head = (layer, head)
        self.mark_stale()

    def chosen(self, r: PairResult) -> tuple[int, int] | None:
        """The head clicked, else the one whose output brings most back (once all are patched)."""
        if self.head is not None and self.head[0] < r.model.n_layers and self.head[1] < r.model.n_heads:
            return self.head
        if self.made_for.get("heads") != (r.state.key, None):  # not swept whole for this pair
            return None
        return top_heads(self.grids["heads"].values, 1)[0]

    def script(self) -> Script:
        return scripts.heads(self.state, self.chosen(self.result))

    def wanted(self, r: PairResult) -> dict[str, tuple]:
        key, head = r.state.key, self.chosen(r)
        wanted = {"heads": (key, None), "knockout": (key[:5], None)}
        return wanted if head is None else wanted | {"head": (key, head)}

    def show(self, r: PairResult) -> Notice:
        heads, knock, one = (self.grids.get(w) for w in ("heads", "knockout", "head"))
        show_grid(self.heads_map, heads, *self._labels(r))
        if knock is not None:
            self.knock_map.set_data(knock.relative_drop, *self._labels(r), (-1.0, 1.0))
        chosen = self.chosen(r)
        if chosen is not None:
            self.head_map.set_title(f"L{chosen[0] + 1} H{chosen[1] + 1} by position")
        show_grid(self.head_map, one, pair=r.pair)
        self.status.setText(f"Heads: {self.progress_text(heads)}. Chosen head: {self.progress_text(one)}.")
        if heads is not None and knock is not None:
            by_patch, by_knock = top_heads(heads.values), top_heads(knock.drop)
            both = [h for h in by_patch if h in by_knock]
            self.compare.setText(
                f"<b>Patching</b>: {named(by_patch)}<br><b>Knockout</b>: {named(by_knock)}<br>"
                f"In both top {LISTED}: {named(both)}"
            )
        return None

    @staticmethod
    def _labels(r: PairResult) -> tuple[list[str], list[str]]:
        return [str(i + 1) for i in range(r.model.n_layers)], [str(j + 1) for j in range(r.model.n_heads)]
