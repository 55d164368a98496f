"""A training run as a Live: its state is the run's settings and the step to train to, and its
compute trains in the worker, each checkpoint landing as a partial result.

    live = Live(TrainState(InductionSettings()), Training("core.lab.training:InductionRun"),
                background=True)
    live.apply(until=800)  # Start: train to step 800, checkpoints landing as they come
    live.apply(stop=True)  # Pause: the run stays where it got to, and the state names that step
    live.apply(until=800)  # Resume: the same run goes on
    live.apply(until=0)    # Reset: nothing trained

Runs are deterministic for their settings, so a state always means the same curves: a run kept
from before goes on when it can (same settings but for the last step, not beyond ``until``),
and is trained again from step 0 when it cannot. ``RunButtons`` are Start, Pause, Reset and the
step to train to (the one control a saved lesson needs to reopen a paused run).
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass, replace

from PySide6.QtWidgets import QHBoxLayout, QPushButton

from app.panels.binding import bind
from app.widgets.spin_boxes import spin
from core.models.advice import models_advice
from core.models.heavy_load import quiet_import


@dataclass(frozen=True)
class TrainState:
    settings: object  # InductionSettings or RecallSettings (``checked()`` refuses bad ones)
    until: int = 0  # train to this step; 0: nothing trained
    stop: bool = False  # Pause: keep the run where it is now; the result's state names its step


@dataclass(frozen=True)
class TrainResult:
    state: TrainState  # as settled: after a pause, ``until`` is the step the run stopped at
    run: object | None = None  # the run, None when nothing is trained (it goes on when resumed)
    checkpoints: tuple = ()  # every checkpoint so far, the last at ``step`` once the compute ends
    step: int = 0  # the run's step when this result was handed back


class Training:
    """The compute of a training Live; it keeps the run it trained last, so a pause and a resume
    go on with it. One compute at a time uses the run: a superseded one stops at its next step
    (its task is cancelled) before the next one takes over."""

    def __init__(self, run_class: str):
        self.run_class = run_class  # "module:Class" of the runs it trains
        self.lock = threading.Lock()
        self.run = None
        self.checkpoints: list = []

    def __call__(self, s: TrainState, progress, partial) -> TrainResult:
        settings = s.settings.checked()
        if not 0 <= s.until <= settings.steps:
            raise ValueError(f"Train to a step from 0 to {settings.steps:,} (the last), not {s.until:,}.")
        with self.lock:
            run = self.run
            if s.until == 0:
                self.run, self.checkpoints = None, []
                return TrainResult(replace(s, stop=False))
            going_on = run is not None and same_run(run.settings, settings)
            if s.stop and going_on:
                return self._stopped(s, run)
            if not going_on or run.step > s.until:
                run = self.run = self._build(settings)
                self.checkpoints = []
            for checkpoint in run.train(progress, until=s.until):
                self.checkpoints.append(checkpoint)
                partial(self._result(s, run))
            return self._result(replace(s, stop=False), run)

    def _stopped(self, s: TrainState, run) -> TrainResult:
        """The run where a superseded compute left it, measured there if its last checkpoint is older."""
        if not self.checkpoints or self.checkpoints[-1].step != run.step:
            self.checkpoints.append(run.measure())
        return self._result(replace(s, until=run.step, stop=False), run)

    def _build(self, settings):
        module, name = self.run_class.split(":")
        try:
            training = quiet_import(module)  # torch, in the worker
        except ImportError as exc:
            raise ImportError(f"Training needs torch. {models_advice()}") from exc
        return getattr(training, name)(settings)

    def _result(self, s: TrainState, run) -> TrainResult:
        return TrainResult(s, run, tuple(self.checkpoints), run.step)


def same_run(a, b) -> bool:
    """Whether settings ``a`` and ``b`` train the same run (they may end at other steps)."""
    return replace(a, steps=0) == replace(b, steps=0)


def train_to_end(live, wanted, tell: Callable[[str, str], None]) -> None:
    """Start: train the settings ``wanted`` to their last step, or ``tell`` which one is out of range."""
    try:
        settings = wanted.checked()
    except ValueError as exc:
        tell(str(exc), "error")
        return
    live.apply(settings=settings, until=settings.steps)


def follow(live, settings) -> None:
    """Give a training Live new settings, keeping its step to train to (at most their last step):
    a run trained so far is trained again with them."""
    wanted = live.wanted
    if wanted.settings != settings:
        live.apply(settings=settings, until=min(wanted.until, settings.steps))


def shown(result: TrainResult | None, fallback) -> tuple:
    """The settings of the run on screen and the step of its last checkpoint; with none,
    ``fallback`` and its last step (the run Start would train)."""
    if result is not None and result.checkpoints:
        return result.state.settings, result.checkpoints[-1].step
    return fallback, fallback.steps


def phase(live) -> str:
    """ "running", "paused" (stopped before its last step), "done" or "empty" (nothing trained)."""
    r, wanted = live.result, live.wanted
    if live.task is not None and wanted.until > 0 and not wanted.stop:  # not a reset, pause or check
        return "running"
    if r is None or r.run is None:
        return "empty"
    return "done" if r.step == r.state.settings.steps else "paused"


SAID = {"running": "training", "paused": "paused", "done": "finished"}  # a status line's first word


def run_status(live, describe: Callable[[TrainResult], str]) -> str:
    """A status line: "training", "paused" or "finished", then ``describe(result)``; before a
    checkpoint has landed, "Starting…" or "Not trained yet."."""
    r, now = live.result, phase(live)
    if r is None or not r.checkpoints:
        return "Starting…" if now == "running" else "Not trained yet."
    return f"{SAID[now]}: {describe(r)}"


class RunButtons(QHBoxLayout):
    """Start (Resume while paused), Pause and, with ``reset``, Reset for one training Live; ``start``
    is the page's own (``train_to_end`` of its settings). ``until_spin`` is the step to train to."""

    def __init__(self, live, start, start_text: str = "Start", reset: bool = True):
        super().__init__()
        self.live, self.start_text = live, start_text
        self.until_spin = bind(spin(0, 0, 1_000_000, step=10), live, "until")
        self.start_button = QPushButton(start_text)
        self.pause_button = QPushButton("Pause")
        self.reset_button = QPushButton("Reset") if reset else None
        for button in (self.start_button, self.pause_button, self.reset_button):
            if button is not None:
                self.addWidget(button)
        self.start_button.clicked.connect(start)
        self.pause_button.clicked.connect(lambda: live.apply(stop=True))
        if self.reset_button is not None:
            self.reset_button.clicked.connect(lambda: live.apply(until=0))
        live.changed.connect(self.show_phase)
        live.busy.connect(lambda _running: self.show_phase())
        self.show_phase()

    def show_phase(self) -> None:
        now = phase(self.live)
        self.start_button.setText("Resume" if now == "paused" else self.start_text)
        self.start_button.setEnabled(now != "running")
        self.pause_button.setEnabled(now == "running")
        if self.reset_button is not None:
            self.reset_button.setEnabled(now != "empty")
