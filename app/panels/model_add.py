"""The offer to add a model from inside the app (SmolLM2, Gemma 3), shared by every panel that
needs a decoder.

    adder = ModelAdder()               # adder.button goes where the panel wants it
    adder.use(gemma3)                  # which model the button adds (SmolLM2 until told)
    text, level = adder.offer()        # shows the button where this installation can add it
    adder.added.connect(load)          # downloaded and converted: load adder.model.KEY
    adder.failed.connect(show)         # offline, a bad file …: the message, and the button again

A model under terms of its own (Gemma's) is fetched only after a person accepts them in a dialog.
The download and conversion run in the worker; ``cancel()`` stops them and leaves nothing behind.
"""

from __future__ import annotations

from PySide6.QtCore import QObject, Qt, Signal
from PySide6.QtWidgets import QMessageBox

from app import worker
from app.widgets.text import WrappingButton
from core.models import gemma3, smollm2

SIZES = {smollm2.KEY: "93 MB", gemma3.KEY: "238 MB"}  # what each add downloads


def has_terms(model) -> bool:
    """Whether ``model`` (a module of core.models.registry.ADDED) comes under terms to accept."""
    return bool(getattr(model, "TERMS", None))


def add_text(model) -> str:
    """The button's words for ``model``."""
    terms = ", under Gemma's terms" if has_terms(model) else ""
    return f"Add {model.NAME} (a {SIZES[model.KEY]} download{terms}, then converted here)"


class ModelAdder(QObject):
    """An Add button and the task behind it: ``model.install`` in the worker."""

    added = Signal()  # the model is on this computer now
    failed = Signal(str)  # why it could not be added (the button is offered again)
    progressed = Signal(int, int)  # (done, total) of the add
    said = Signal(str)  # what the add is doing and how far it has got, as `models add` says it
    _detailed = Signal(str)  # from the worker: how far the step has got ("12 of 93 MB", "tensor 3 of 272")
    running = Signal(bool)  # an add started (True) or ended in any way (False)

    def __init__(self, parent: QObject | None = None):
        super().__init__(parent)
        self.model = smollm2
        self.button = WrappingButton(add_text(smollm2))
        self.button.hide()
        self.slot = worker.Newest()  # the add; cancelling it drops whatever it still reports
        self.step = ""  # the stage now running, as the model's STEPS name it
        self.button.clicked.connect(self.start)
        self.progressed.connect(self._on_progress)
        self._detailed.connect(self._on_detail)  # queued: emitted in the worker's thread

    @property
    def busy(self) -> bool:
        return self.slot.running

    def use(self, model) -> None:
        """Offer ``model`` from now on (not while an add is running)."""
        if not self.busy:
            self.model = model
            self.button.setText(add_text(model))

    def offer(self, reason: str | None = None) -> tuple[str, str]:
        """Show the button where this installation can add the model; the message to show:
        ``reason`` (an error), what to get instead (no torch, a lite build), or how to add it."""
        blocked = self.model.cannot_add()
        self.button.setVisible(blocked is None)
        if reason:
            return reason, "error"
        if blocked:
            return blocked, "info"
        terms = " and accept Gemma's terms" if has_terms(self.model) else ""
        return (
            f"{self.model.NAME} is not on this computer yet. Press Add{terms} to download and convert "
            f"it once ({SIZES[self.model.KEY]}), or open a decoder folder you already have.",
            "info",
        )

    def stage(self, done: int, total: int) -> str:
        """What the add is doing at progress ``done`` of ``total`` ("" once done)."""
        steps = self.model.STEPS
        return steps[done] + "…" if 0 <= done < min(total, len(steps)) else ""

    def agree(self) -> bool:
        """Ask a person to accept the model's terms of use (True: accepted)."""
        box = QMessageBox(self.button)
        box.setIcon(QMessageBox.Icon.Question)
        box.setWindowTitle(f"{self.model.NAME}: terms of use")
        box.setTextFormat(Qt.TextFormat.RichText)
        box.setText(
            f"<p>{self.model.TERMS}</p><p>Read them in full: "
            f"<a href='{self.model.TERMS_URL}'>{self.model.TERMS_URL}</a></p>"
            f"<p>Do you accept them and want to add {self.model.NAME} now?</p>"
        )
        box.setTextInteractionFlags(Qt.TextInteractionFlag.TextBrowserInteraction)
        accept = box.addButton("Accept and add", QMessageBox.ButtonRole.AcceptRole)
        box.addButton(QMessageBox.StandardButton.Cancel)
        box.exec()
        return box.clickedButton() is accept

    def _on_progress(self, done: int, total: int) -> None:
        step = self.stage(done, total)
        if self.busy and step and step != self.step:
            self.step = step
            self.said.emit(step)

    def _on_detail(self, text: str) -> None:
        if self.busy and self.step:  # a cancelled add's last words are dropped
            self.said.emit(f"{self.step} {text}")

    def start(self) -> None:
        """Download and convert the model in the worker, once its terms (if any) are accepted
        (nothing when an add is already running)."""
        if self.slot.running:
            return
        terms = has_terms(self.model)
        if terms and not self.agree():
            self.said.emit(f"{self.model.NAME} was not added: its terms were not accepted.")
            return
        self.button.hide()

        def refused(message: str) -> None:
            self.button.show()
            self.failed.emit(message)

        self.step = ""
        self.slot.start(
            self.model.install,
            detail=self._detailed.emit,
            **({"accept_terms": True} if terms else {}),
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
