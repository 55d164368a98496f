"""Trainer: one training run (core.lab's InductionRun, RecallRun) in the worker, with Start,
Pause and Reset. A run is built from its settings in the worker (torch loads there), has those
``settings``, and ``train(on_step)`` yields its checkpoints.

The worker thread appends checkpoints to an inbox; a timer on the UI thread takes them out at
most REFRESH_HZ times a second and emits ``updated``, so a fast run never floods the event loop.
Pause and cancel are checked after every training step (tens of milliseconds).
"""

from __future__ import annotations

import threading
import time
from collections import deque
from enum import StrEnum

from PySide6.QtCore import QObject, QTimer, Signal
from PySide6.QtWidgets import QHBoxLayout, QPushButton

from app import worker
from core.models.advice import models_advice
from core.models.heavy_load import quiet_import

REFRESH_HZ = 10  # plots redraw at most this often while training
PAUSE_POLL_S = 0.02  # how often a paused run looks for Start or Cancel


class Phase(StrEnum):
    EMPTY = "empty"  # nothing trained yet (or reset)
    RUNNING = "running"
    PAUSED = "paused"
    DONE = "done"  # reached its last step, failed or was cancelled


class Trainer(QObject):
    """Trains one run at a time; ``checkpoints`` grows while it trains."""

    updated = Signal()  # new checkpoints, or the phase changed
    failed = Signal(str)

    def __init__(self, run_class: str = "core.lab.training:InductionRun"):
        super().__init__()
        self.run_class = run_class  # "module:Class" of the runs it trains
        self.run = None  # the run, once the worker has built it
        self.settings = None  # of the run started last
        self.checkpoints: list = []
        self.phase = Phase.EMPTY
        self.step = 0  # the last finished training step (updated every step)
        self.task: worker.Task | None = None
        self._inbox: deque = deque()
        self._paused = threading.Event()
        self.paused_at: float | None = None  # perf_counter() when the worker last stopped for a pause
        self.timer = QTimer(self)
        self.timer.setInterval(1000 // REFRESH_HZ)
        self.timer.timeout.connect(self._drain)

    def start(self, settings) -> None:
        """Resume a paused run with the same settings, or train a new one from step 0."""
        if self.phase == Phase.RUNNING:
            return
        if self.phase == Phase.PAUSED and self.settings == settings:
            self._paused.clear()
            self._set_phase(Phase.RUNNING)
            return
        self.reset()
        # This run's own inbox and pause flag: a cancelled run still finishing cannot reach the next.
        self._inbox, self._paused = deque(), threading.Event()
        self.settings = settings  # checked by the caller's Live
        self.task = worker.run_task(
            self._train,
            settings,
            self._inbox,
            self._paused,
            on_error=self._on_error,
            on_progress=self._on_progress,
            on_finished=self._ended,
        )
        self._set_phase(Phase.RUNNING)
        self.timer.start()

    def shown(self, fallback) -> tuple:
        """The run the plots show and the step of its last checkpoint; before any checkpoint,
        ``fallback`` and its last step (the run Start would train)."""
        if self.checkpoints:
            return self.run.settings, self.checkpoints[-1].step
        return fallback, fallback.steps

    def pause(self) -> None:
        if self.phase == Phase.RUNNING:
            self._paused.set()
            self._set_phase(Phase.PAUSED)

    def reset(self) -> None:
        """Stop any training and forget the run."""
        if self.task is not None:
            self.task.cancel()
            self.task = None
        self._paused.clear()
        self.timer.stop()
        self.run, self.checkpoints, self.step = None, [], 0
        self._set_phase(Phase.EMPTY)

    def _train(self, settings, inbox: deque, paused: threading.Event, progress) -> None:
        """In the worker: build the run (torch loads here, not on the UI thread), put it in ``inbox``
        followed by its checkpoints; wait while ``paused`` is set; stop after the step during which
        the task was cancelled."""
        module, name = self.run_class.split(":")
        try:
            training = quiet_import(module)
        except ImportError as exc:
            raise ImportError(f"Training needs torch. {models_advice()}") from exc
        run = getattr(training, name)(settings)
        inbox.append(run)

        def between_steps(step: int, total: int) -> None:
            progress(step, total)  # raises Cancelled once the task is cancelled
            if paused.is_set():
                self.paused_at = time.perf_counter()
                while paused.is_set():
                    time.sleep(PAUSE_POLL_S)
                    progress(step, total)

        for checkpoint in run.train(between_steps):
            inbox.append(checkpoint)

    def _on_progress(self, step: int, _total: int) -> None:
        self.step = step

    def _on_error(self, text: str) -> None:
        self.failed.emit(text)

    def _ended(self) -> None:
        if self.task is not None and self.task.done:
            self.task = None
            self._drain()
            self.timer.stop()
            self._set_phase(Phase.DONE)

    def _drain(self) -> None:
        if self._inbox:
            while self._inbox:
                item = self._inbox.popleft()
                if self.run is None:
                    self.run = item  # the first item: the run itself
                else:
                    self.checkpoints.append(item)
            self.updated.emit()

    def _set_phase(self, phase: Phase) -> None:
        self.phase = phase
        self.updated.emit()


class RunButtons(QHBoxLayout):
    """Start (Resume while paused), Pause and, with ``reset``, Reset for one Trainer; ``start``
    is the page's own (it checks the settings first)."""

    def __init__(self, trainer: Trainer, start, start_text: str = "Start", reset: bool = True):
        super().__init__()
        self.start_text = start_text
        self.start_button = QPushButton(start_text)
        self.pause_button = QPushButton("Pause")
        self.reset_button = QPushButton("Reset") if reset else None
        for button in (self.start_button, self.pause_button, self.reset_button):
            if button is not None:
                self.addWidget(button)
        self.start_button.clicked.connect(start)
        self.pause_button.clicked.connect(trainer.pause)
        if self.reset_button is not None:
            self.reset_button.clicked.connect(trainer.reset)

    def show_phase(self, phase: Phase) -> None:
        self.start_button.setText("Resume" if phase == Phase.PAUSED else self.start_text)
        self.start_button.setEnabled(phase != Phase.RUNNING)
        self.pause_button.setEnabled(phase == Phase.RUNNING)
        if self.reset_button is not None:
            self.reset_button.setEnabled(phase != Phase.EMPTY)
