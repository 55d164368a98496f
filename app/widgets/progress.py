"""RunProgress: a progress bar that always says what it counts.

A plain QProgressBar shows no text until its first value, so one beside a button ("Knock out each
head", "Cancel the sweep") read as an empty text box nobody could type in. This one says that
nothing has run yet (``idle``), how far a run is (``running``, a QProgressBar format such as
"%v of %m layers"), that it ended (``done``) or where it was stopped (``stopped``).
"""

from __future__ import annotations

from PySide6.QtWidgets import QProgressBar


class RunProgress(QProgressBar):
    def __init__(
        self, idle: str, running: str, done: str, stopped: str = "stopped at %p%", what: str = "", parent=None
    ):
        super().__init__(parent)
        self.texts = {"idle": idle, "running": running, "done": done, "stopped": stopped}
        self.state = "idle"
        if what:
            self.setToolTip(what)
        self.idle()

    def idle(self, text: str | None = None) -> None:
        """Nothing run (for what is on screen now): an empty bar that says so."""
        self.state = "idle"
        self.setRange(0, 1)
        self.setValue(0)
        self.setFormat(text or self.texts["idle"])

    def start(self) -> None:
        self.state = "running"
        self.setRange(0, 1)
        self.setValue(0)
        self.setFormat(self.texts["running"])

    def progressed(self, done: int, total: int) -> None:
        self.state = "running" if done < total else "done"
        self.setRange(0, max(total, 1))
        self.setValue(min(done, max(total, 1)))
        self.setFormat(self.texts[self.state])

    def finished(self) -> None:
        """What is on screen is complete (also when another step ran it): a full bar."""
        self.state = "done"
        if self.maximum() <= 0 or self.value() < 0:
            self.setRange(0, 1)
        self.setValue(self.maximum())  # a run that just ended keeps its count
        self.setFormat(self.texts["done"])

    def stopped(self) -> None:
        """Cancelled: the bar keeps how far it got and says so."""
        if self.state == "running":
            self.state = "stopped"
            self.setFormat(self.texts["stopped"])
