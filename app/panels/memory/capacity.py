"""Step 5: capacity: the share of corrupted queries each network recovers as M grows (a sweep in
the worker, with progress and cancel)."""

from __future__ import annotations

import numpy as np
import pyqtgraph as pg
from PySide6.QtWidgets import QLabel, QProgressBar, QPushButton, QVBoxLayout, QWidget

from app import worker
from app.panels.memory import scripts
from app.panels.memory.state import MemoryResult, N
from app.panels.scripts import Script
from app.panels.step import Live, Notice, Step
from app.widgets.plots import dashed_line, share_plot
from app.widgets.reflow_grid import ReflowGrid
from app.widgets.spin_boxes import spin
from app.widgets.text import note
from app.widgets.weight_bars import OTHER_COLOR, TARGET_COLOR
from core.maths.explain import num
from core.maths.hopfield import CAPACITY_RATIO, CapacitySweep, capacity_sweep


class CapacityPage(Step):
    """The sweep uses the flips, β and seed of the shared settings when Run is pressed."""

    def __init__(self, live: Live):
        super().__init__(live)
        self.sweep: CapacitySweep | None = None
        self.sweep_seed = 0  # the seed the shown sweep drew from
        self.task: worker.Task | None = None
        self.trials_spin = spin(50, 0, 1000, tracking=True)
        self.run_button = QPushButton("Run the sweep")
        self.cancel_button = QPushButton("Cancel")
        self.cancel_button.setEnabled(False)
        self.progress = QProgressBar()
        self.progress.setRange(0, 1)
        self.progress.setValue(0)
        trials = QLabel("Trials per load")
        wide = ((trials, 0, 0, 1), (self.trials_spin, 0, 1, 1), (self.run_button, 0, 2, 1))
        wide += ((self.cancel_button, 0, 3, 1), (self.progress, 0, 4, 1))
        narrow = ((trials, 0, 0, 1), (self.trials_spin, 0, 1, 1), (self.run_button, 1, 0, 1))
        narrow += ((self.cancel_button, 1, 1, 1), (self.progress, 2, 0, 2))
        controls = ReflowGrid(wide, narrow, stretch=(4, 1))  # more rows when the room is short
        loads = (1, 2, 5, 10, 20, 50, 100, 200, 400)
        self.capacity_plot = share_plot(
            "Corrupted queries recovered, N = 64", "stored patterns M", "recovered", loads
        )
        self.classical_curve = self.capacity_plot.plot(
            pen=pg.mkPen(OTHER_COLOR, width=2), symbol="o", symbolBrush=OTHER_COLOR, name="classical"
        )
        self.modern_curve = self.capacity_plot.plot(
            pen=pg.mkPen(TARGET_COLOR, width=2), symbol="t", symbolBrush=TARGET_COLOR, name="modern"
        )
        self.capacity_plot.addItem(
            dashed_line(np.log10(CAPACITY_RATIO * N), f"0.14·N = {num(CAPACITY_RATIO * N, 1)}")
        )
        self.capacity_note = note(
            "Press <b>Run the sweep</b>: for each load M, the network stores M fresh random ±1 "
            "patterns, every one of them is queried with the chosen number of flipped pixels, "
            "and the plot shows the share that comes back (every entry within 0.3 of the stored "
            "pattern). β and flips come from the left.",
            rich=True,
        )
        run = QVBoxLayout()  # the sweep's controls and what they do
        run.addLayout(controls)
        run.addWidget(self.capacity_note)
        self.layout_with(None, run, self.capacity_plot, on_top=True)
        self.run_button.clicked.connect(self.run_sweep)
        self.cancel_button.clicked.connect(self.cancel_sweep)

    def views(self) -> dict[str, QWidget]:
        return {"capacity": self.capacity_plot}

    def script(self) -> Script:
        """The sweep on the plot; before any, the one Run would start now."""
        if self.sweep is None:
            s = self.state
            return scripts.capacity(s.seed, self.trials_spin.value(), self.flips(), s.beta)
        w = self.sweep
        return scripts.capacity(self.sweep_seed, w.trials, w.flips, w.beta)

    def flips(self) -> int:
        """Flipped pixels per query: the article's 6, or the shared setting."""
        return 6 if self.state.source == "article" else self.state.flips

    def draw(self, r: MemoryResult) -> Notice:
        return None  # the plot changes only when a sweep is run

    def run_sweep(self) -> None:
        """Start the capacity sweep with the current flips, β and seed, in the background."""
        if self.task is not None and not self.task.done:
            return
        s = self.state
        self.progress.setRange(0, 1)
        self.progress.setValue(0)
        self.run_button.setEnabled(False)
        self.cancel_button.setEnabled(True)
        self.task = worker.run_task(
            capacity_sweep,
            np.random.default_rng(s.seed),
            n=N,
            trials=self.trials_spin.value(),
            flips=self.flips(),
            beta=s.beta,
            on_result=lambda sweep, seed=s.seed: self._show_sweep(sweep, seed),
            on_error=lambda text: self.tell(text),
            on_progress=self._on_progress,
            on_finished=self._sweep_finished,
        )

    def cancel_sweep(self) -> None:
        if self.task is not None:
            self.task.cancel()

    def _on_progress(self, done: int, total: int) -> None:
        self.progress.setRange(0, total)
        self.progress.setValue(done)

    def _sweep_finished(self) -> None:
        self.run_button.setEnabled(True)
        self.cancel_button.setEnabled(False)
        if self.task is not None and self.task.cancelled:
            self.tell("Sweep cancelled; the plot keeps the last finished sweep.", "info")

    def _show_sweep(self, sweep: CapacitySweep, seed: int) -> None:
        self.sweep, self.sweep_seed = sweep, seed
        self.tell("")
        self.classical_curve.setData(sweep.loads, sweep.classical)
        self.modern_curve.setData(sweep.loads, sweep.modern)
        self.capacity_note.setText(
            f"{sweep.trials} trials per load, {sweep.flips} flipped pixels, β = {sweep.beta:.4g}. "
            f"At least 90% of queries come back up to M = {sweep.reliable_load(sweep.classical)} "
            f"for the classical network (0.14·N = {num(sweep.classical_limit, 1)}) and up to "
            f"M = {sweep.reliable_load(sweep.modern)} for the modern one (largest load tried: "
            f"{int(sweep.loads[-1])})."
        )
