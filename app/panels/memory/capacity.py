"""Step 5: capacity: the share of corrupted queries each network recovers as M grows (a sweep in
the worker, each load's point landing as it is measured, with progress and cancel)."""

from __future__ import annotations

import numpy as np
import pyqtgraph as pg
from PySide6.QtWidgets import QLabel, QPushButton, QVBoxLayout, QWidget

from app.panels.memory import scripts
from app.panels.memory.state import CapacityState, N, compute_capacity
from app.panels.scripts import Script
from app.panels.step import Live, Notice, Step
from app.widgets.plots import dashed_line, share_plot
from app.widgets.progress import RunProgress, show_runs
from app.widgets.reflow_grid import ReflowGrid
from app.widgets.spin_boxes import spin
from app.widgets.text import note
from app.widgets.weight_bars import OTHER_COLOR, TARGET_COLOR
from core.maths.explain import num
from core.maths.hopfield import CAPACITY_RATIO, CapacitySweep, default_loads

LOADS = len(default_loads())  # the points of a whole sweep


class CapacityPage(Step):
    """The sweep takes the flips, β and seed of the shared settings while it is shown, and its
    own trials per load; it runs again when one of them changes."""

    def __init__(self, shared: Live):
        super().__init__(Live(CapacityState(), compute_capacity, background=True, start=False))
        self.shared = shared
        self.trials_spin = self.bind(spin(self.state.trials, 0, 1000), "trials")
        self.progress = RunProgress("not run yet", "trial %v of %m", "%m trials done", "stopped at %v of %m")
        self.cancel_button = QPushButton("Cancel")
        show_runs(self.live, self.progress, self.cancel_button)
        trials = QLabel("Trials per load")
        wide = ((trials, 0, 0, 1), (self.trials_spin, 0, 1, 1), (self.cancel_button, 0, 2, 1))
        wide += ((self.progress, 0, 3, 1),)
        narrow = ((trials, 0, 0, 1), (self.trials_spin, 0, 1, 1), (self.cancel_button, 1, 0, 1))
        narrow += ((self.progress, 2, 0, 2),)
        controls = ReflowGrid(wide, narrow, stretch=(3, 1))  # more rows when the room is short
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
            "For each load M, the network stores M fresh random ±1 patterns, every one of them is "
            "queried with the chosen number of flipped pixels, and the plot shows the share that comes "
            "back (every entry within 0.3 of the stored pattern). β and flips come from the left.",
        )
        run = QVBoxLayout()  # the sweep's controls and what they do
        run.addLayout(controls)
        run.addWidget(self.capacity_note)
        self.layout_with(None, run, self.capacity_plot, on_top=True)
        shared.changed.connect(lambda: self.isVisible() and self.sweep())

    def views(self) -> dict[str, QWidget]:
        return {"capacity": self.capacity_plot}

    def showEvent(self, event) -> None:
        super().showEvent(event)
        self.sweep()

    def wanted(self) -> CapacityState:
        """The sweep of the shared settings now (the article's experiment flips 6 pixels)."""
        s = self.shared.state
        flips = 6 if s.source == "article" else s.flips
        return CapacityState(s.seed, flips, s.beta, self.live.wanted.trials)

    def sweep(self) -> None:
        """Sweep the shared settings, unless that sweep is on the plot whole or running now."""
        wanted, r = self.wanted(), self.live.result
        whole = r is not None and len(r.loads) == LOADS
        if wanted != self.live.wanted or (self.live.task is None and not whole):
            self.live.apply(seed=wanted.seed, flips=wanted.flips, beta=wanted.beta)

    def script(self) -> Script:
        """The sweep on the plot; before any, the one this step would run now."""
        s = self.state if self.live.result is not None else self.wanted()
        return scripts.capacity(s.seed, s.trials, s.flips, s.beta)

    def draw(self, sweep: CapacitySweep) -> Notice:
        self.classical_curve.setData(sweep.loads, sweep.classical)
        self.modern_curve.setData(sweep.loads, sweep.modern)
        so_far = "" if len(sweep.loads) == LOADS else f" So far {len(sweep.loads)} of {LOADS} loads."
        self.capacity_note.setText(
            f"{sweep.trials} trials per load, {sweep.flips} flipped pixels, β = {sweep.beta:.4g}. "
            f"At least 90% of queries come back up to M = {sweep.reliable_load(sweep.classical)} "
            f"for the classical network (0.14·N = {num(sweep.classical_limit, 1)}) and up to "
            f"M = {sweep.reliable_load(sweep.modern)} for the modern one (largest load tried: "
            f"{int(sweep.loads[-1])}).{so_far}"
        )
        return None
