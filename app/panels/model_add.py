"""The offer to add SmolLM2 from inside the app, shared by every panel that needs a decoder.

    adder = SmolLM2Adder()             # adder.button goes where the panel wants it
    text, level = adder.offer()        # shows the button where this installation can add the model
    adder.added.connect(load)          # downloaded and converted: load it
    adder.failed.connect(show)         # offline, a bad file …: the message, and the button again

The download and conversion run in the worker; ``cancel()`` stops them and leaves nothing behind.
"""

from __future__ import annotations

from PySide6.QtCore import QObject, Signal

from app import worker
from app.widgets.text import WrappingButton
from core.models import smollm2

ADD_TEXT = "Add SmolLM2-135M (a 93 MB download, then converted here)"


class SmolLM2Adder(QObject):
    """An Add button and the task behind it: ``smollm2.install`` in the worker."""

    added = Signal()  # the model is on this computer now
    failed = Signal(str)  # why it could not be added (the button is offered again)
    progressed = Signal(int, int)  # (done, total) of the add
    said = Signal(str)  # what the add is doing and how far it has got, as `models add` says it
    _detailed = Signal(str)  # from the worker: how far the step has got ("12 of 93 MB", "tensor 3 of 272")
    running = Signal(bool)  # an add started (True) or ended in any way (False)

    def __init__(self, text: str = ADD_TEXT, parent: QObject | None = None):
        super().__init__(parent)
        self.button = WrappingButton(text)
        self.button.hide()
        self.slot = worker.Newest()  # the add; cancelling it drops whatever it still reports
        self.step = ""  # the stage now running, as STEPS names it
        self.button.clicked.connect(self.start)
        self.progressed.connect(self._on_progress)
        self._detailed.connect(self._on_detail)  # queued: emitted in the worker's thread

    @property
    def busy(self) -> bool:
        return self.slot.running

    def offer(self, reason: str | None = None) -> tuple[str, str]:
        """Show the button where this installation can add SmolLM2; the message to show:
        ``reason`` (an error), what to get instead (no torch, a lite build), or how to add it."""
        blocked = smollm2.cannot_add()
        self.button.setVisible(blocked is None)
        if reason:
            return reason, "error"
        if blocked:
            return blocked, "info"
        return (
            f"{smollm2.NAME} is not on this computer yet. Press Add to download and convert it once "
            "(93 MB), or open a decoder folder you already have.",
            "info",
        )

    @staticmethod
    def stage(done: int, total: int) -> str:
        """What the add is doing at progress ``done`` of ``total`` ("" once done)."""
        return smollm2.STEPS[done] + "…" if 0 <= done < min(total, len(smollm2.STEPS)) else ""

    def _on_progress(self, done: int, total: int) -> None:
        step = self.stage(done, total)
        if self.busy and step and step != self.step:
            self.step = step
            self.said.emit(step)

    def _on_detail(self, text: str) -> None:
        if self.busy and self.step:  # a cancelled add's last words are dropped
            self.said.emit(f"{self.step} {text}")

    def start(self) -> None:
        """Download and convert SmolLM2 in the worker (nothing when an add is already running)."""
        if self.slot.running:
            return
        self.button.hide()

        def refused(message: str) -> None:
            self.button.show()
            self.failed.emit(message)

        self.step = ""
        self.slot.start(
            smollm2.install,
            detail=self._detailed.emit,
            on_result=lambda _: self.added.emit(),
            on_error=refused,
            on_progress=self.progressed.emit,
            on_finished=lambda: self.running.emit(False),
        )
        self.running.emit(True)

    def cancel(self) -> bool:
        """Stop a running add (True when there was one); the button is offered again."""
        if not self.slot.cancel():
            return False
        self.button.show()
        self.running.emit(False)
        return True
