"""Step 4: every head's output patched at every position (layers × heads), beside the knockout
ranking; for a chosen head, its output, query, key, value and pattern by position."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
from PySide6.QtWidgets import QFormLayout, QHBoxLayout, QPushButton, QVBoxLayout, QWidget

from app.panels.patching import scripts
from app.panels.patching.state import PairResult
from app.panels.patching.sweep import SweepStep, beside, grid_map, show_grid
from app.panels.scripts import Script
from app.panels.step import Live, Notice
from app.widgets.spin_boxes import spin
from app.widgets.text import note

LISTED = 5
MOST = 10_000  # layers or heads: the model refuses what it does not have, with a message


def top_heads(scores: np.ndarray, k: int = LISTED) -> list[tuple[int, int]]:
    """The ``k`` (layer, head) with the largest scores, largest first (nan counts as none)."""
    flat = np.nan_to_num(scores, nan=-np.inf).ravel()
    order = np.argsort(-flat)[:k]
    return [(int(i // scores.shape[1]), int(i % scores.shape[1])) for i in order if np.isfinite(flat[i])]


def named(heads: list[tuple[int, int]]) -> str:
    return ", ".join(f"L{layer + 1} H{head + 1}" for layer, head in heads) or "none yet"


class HeadsPage(SweepStep):
    view = "heads"

    def __init__(self, live: Live, open_head: Callable[[dict], None]):
        super().__init__(live)
        self.open_head = open_head  # shows a head, as a cell, in Inside a head
        self.layer = self.bind(spin(self.state.layer, 0, MOST), "layer")
        self.layer.setPrefix("layer ")
        self.layer.setSpecialValueText("best head")  # layer 0: the head patching ranks first
        self.layer.setToolTip("the chosen head's layer; best: the head whose output brings most back")
        self.head = self.bind(spin(self.state.head, 1, MOST), "head")
        self.head.setPrefix("head ")
        self.heads_map = grid_map("Head outputs", layers=False)
        self.knock_map = grid_map("Knockout", layers=False)
        self.head_map = grid_map("One head", layers=False)
        self.status = note()
        self.compare = note(rich=True)
        controls = QFormLayout()
        self.sweep_rows(controls)
        self.inside_button = QPushButton("Inside…")
        self.inside_button.setToolTip("the chosen head in the Inside a head panel, on the clean prompt")
        chosen = QHBoxLayout()  # one row: the column is full at lecture text sizes
        for part in (self.layer, self.head, self.inside_button):
            chosen.addWidget(part)
        controls.addRow(chosen)
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

    def views(self) -> dict[str, QWidget]:
        return {"heads": self.heads_map, "knockout": self.knock_map, "head": self.head_map}

    def _open_inside(self) -> None:
        """The chosen head on the clean prompt, from the last token to the first changed one."""
        r = self.result
        if r is not None and r.chosen is not None:
            layer, head = r.chosen
            cell = {"layer": layer + 1, "head": head + 1, "query": 0, "key": r.pair.differ[0] + 1}
            self.open_head({"source": r.state.source, "prompt": r.state.clean, **cell})

    def choose(self, layer: int, head: int) -> None:
        """Choose the head at ``layer``, ``head`` (from 0)."""
        self.apply(layer=layer + 1, head=head + 1)

    def script(self) -> Script:
        return scripts.heads(self.state)

    def show(self, r: PairResult) -> Notice:
        heads, knock, one = (r.grids.get(w) for w in ("heads", "knockout", "head"))
        show_grid(self.heads_map, heads, *self._labels(r))
        if knock is not None:
            self.knock_map.set_data(knock.relative_drop, *self._labels(r), (-1.0, 1.0))
        else:
            self.knock_map.clear()
        chosen = r.chosen
        self.head.setEnabled(bool(r.state.layer))  # with the best head, the layer box says it all
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
        else:
            self.compare.setText("The top heads by patching and by knock-out follow once both are run.")
        return None

    @staticmethod
    def _labels(r: PairResult) -> tuple[list[str], list[str]]:
        return [str(i + 1) for i in range(r.model.n_layers)], [str(j + 1) for j in range(r.model.n_heads)]
