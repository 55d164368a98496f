"""Step 3: tiled attention step by step: the tile in fast memory, running m and l, partial outputs."""

from __future__ import annotations

import numpy as np
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QCheckBox, QFormLayout, QHBoxLayout, QPushButton, QSlider, QVBoxLayout, QWidget

from app.panels.cost import scripts
from app.panels.cost.state import FlashResult, FlashState, compute_flash
from app.panels.scripts import Script
from app.panels.step import Live, Notice, Step
from app.widgets import Heatmap, MatrixView
from app.widgets.colors import default_levels
from app.widgets.quiet import quiet
from app.widgets.reflow_grid import ReflowGrid
from app.widgets.spin_boxes import spin
from app.widgets.text import note
from core.maths.flash import FlashTrace


class FlashPage(Step):
    def __init__(self):
        super().__init__(Live(FlashState(), compute_flash))
        s = self.state
        self.n_spin = self.bind(spin(s.n, 0, 64, tracking=True), "n")
        self.d_spin = self.bind(spin(s.d, 0, 8, tracking=True), "d")
        self.bq_spin = self.bind(spin(s.block_q, 0, 64, tracking=True), "block_q")
        self.bk_spin = self.bind(spin(s.block_k, 0, 64, tracking=True), "block_k")
        self.causal_box = self.bind(QCheckBox("causal mask"), "causal")
        self.seed_spin = self.bind(spin(s.seed, 0, 2**31 - 1, tracking=True), "seed")
        form = QFormLayout()
        form.addRow("tokens n", self.n_spin)
        form.addRow("width d", self.d_spin)
        form.addRow("block_q", self.bq_spin)
        form.addRow("block_k", self.bk_spin)
        self.bq_spin.setToolTip("query rows per block")
        self.bk_spin.setToolTip("key and value rows per tile")
        form.addRow(self.causal_box)
        form.addRow("seed", self.seed_spin)
        self.prev_button = QPushButton("◀ Previous")
        self.next_button = QPushButton("Next tile ▶")
        self.step_slider = QSlider(Qt.Orientation.Horizontal)  # which tile step is shown: a view, not state
        buttons = QHBoxLayout()
        buttons.addWidget(self.prev_button)
        buttons.addWidget(self.next_button)
        self.step_note = note()
        self.memory_note = note()
        self.check_note = note()
        controls = QVBoxLayout()
        controls.addLayout(form)
        controls.addLayout(buttons)
        controls.addWidget(self.step_slider)
        controls.addWidget(self.memory_note)
        controls.addWidget(self.check_note)
        controls.addStretch(1)

        self.scores = Heatmap("Scores computed so far", signed=True, colorbar=False, cell_text=False)
        self.scores.set_describer(self._describe_score)
        self.tile_view = MatrixView("This tile, per query row", signed=True)
        self.state_view = MatrixView("Running state of every query row", signed=True)
        middle, tables = QWidget(), QWidget()
        middle_layout, tables_layout = QVBoxLayout(middle), QVBoxLayout(tables)
        middle_layout.addWidget(self.scores, 1)
        middle_layout.addWidget(self.step_note)
        tables_layout.addWidget(self.tile_view)
        tables_layout.addWidget(self.state_view, 1)
        for layout in (middle_layout, tables_layout):
            layout.setContentsMargins(0, 0, 0, 0)
        # The tables go under the scores where the page is too narrow for three columns.
        views = ReflowGrid(
            ((middle, 0, 0, 1), (tables, 0, 1, 1)), ((middle, 0, 0, 1), (tables, 1, 0, 1)), (0, 0)
        )
        self.layout_with(None, controls, views)
        self.step_slider.valueChanged.connect(self.show_tile)
        self.prev_button.clicked.connect(lambda: self.step_slider.setValue(self.step_slider.value() - 1))
        self.next_button.clicked.connect(lambda: self.step_slider.setValue(self.step_slider.value() + 1))

    def views(self) -> dict[str, QWidget]:
        return {"flash_scores": self.scores, "flash_tile": self.tile_view, "flash_state": self.state_view}

    @property
    def trace(self) -> FlashTrace:
        return self.result.trace

    def script(self) -> Script:
        return scripts.flash(self.state, self.step_slider.value())

    def draw(self, r: FlashResult) -> Notice:
        s, held = r.state, r.held
        self.memory_note.setText(
            f"<b>Memory held</b> (numbers, besides Q, K, V): naive attention keeps all n² = {held.naive:,} "
            f"scores; the tiled version keeps one {s.block_q} × {s.block_k} tile ({held.tile:,}) plus "
            f"m, l and the output of every row, {s.n} × ({s.d} + 2) = {held.running:,}: "
            f"<b>{held.tiled:,}</b> in all."
        )
        skipped = f" {len(r.trace.skipped)} tiles hidden by the mask are skipped." if r.trace.skipped else ""
        self.check_note.setText(
            f"<b>Final output against naive attention</b>: max |difference| = {r.error:.1e}.{skipped}"
        )
        self.score_levels = default_levels(r.naive.masked, signed=True)
        with quiet(self.step_slider):
            self.step_slider.setRange(0, len(r.trace.steps) - 1)  # keeps the current step where it can
        self.show_tile(self.step_slider.value())
        return None

    def show_tile(self, k: int) -> None:
        """Show the state right after step ``k`` of the trace."""
        if self.stale:  # a newer trace than the slider's range: drawing it shows the slider's tile
            self.refresh()
            return
        r = self.result
        trace, s, naive = r.trace, r.state, r.naive
        step = trace.steps[k]
        tokens = [str(i) for i in range(s.n)]
        done = trace.computed_cells(k)
        self.scores.set_data(np.where(done, naive.masked, -np.inf), tokens, tokens, self.score_levels)
        self.scores.mark(
            step.rows.start, step.cols.start, len(range(s.n)[step.rows]), len(range(s.n)[step.cols])
        )
        state = trace.state_after(k)
        before = trace.state_after(k - 1).m[step.rows] if k else np.full(len(step.m), -np.inf)
        rows = tokens[step.rows]
        self.tile_view.set_data(
            np.column_stack([step.tile_max, before, step.m, step.rescale, step.l]),
            rows,
            ["tile\nmax", "m\nbefore", "m\nafter", "rescale", "l\nafter"],  # narrow at large text
        )
        self.state_view.set_data(
            np.column_stack([state.m, state.l, state.output]),
            tokens,
            ["m", "l", *(f"o{j}" for j in range(s.d))],
        )
        self.state_view.highlight(rows=range(step.rows.start, step.rows.stop))
        self.step_note.setText(
            f"<b>Step {k + 1} of {len(trace.steps)}</b>: in fast memory are query block {step.q_block} "
            f"(rows {step.rows.start}–{step.rows.stop - 1}) and key/value tile {step.k_block} "
            f"(keys {step.cols.start}–{step.cols.stop - 1}), outlined. Where a row's maximum rises, "
            "its old l and output are multiplied by the rescale factor exp(m before − m after)."
        )
        self.prev_button.setEnabled(k > 0)
        self.next_button.setEnabled(k < len(trace.steps) - 1)

    def _describe_score(self, i: int, j: int) -> str:
        naive = self.result.naive
        if not np.isfinite(self.scores.values[i, j]):
            return "not computed yet" if naive.mask is None or naive.mask[i, j] else "hidden"
        return f"q{i}·k{j} / √{self.result.state.d}"

    def exercise(self) -> None:
        self.bq_spin.setValue(0)
        self.bq_spin.setValue(64)
        self.bq_spin.setValue(4)
        self.n_spin.setValue(0)
        self.n_spin.setValue(64)
        self.bk_spin.setValue(5)
        self.causal_box.setChecked(True)
        self.d_spin.setValue(0)
        self.seed_spin.setValue(3)
        for k in range(len(self.trace.steps)):
            self.step_slider.setValue(k)
        self.n_spin.setValue(16)
        self.bk_spin.setValue(4)
        self.causal_box.setChecked(False)
        self.d_spin.setValue(4)
        self.seed_spin.setValue(0)
        self.step_slider.setValue(6)
