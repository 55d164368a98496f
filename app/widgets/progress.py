"""RunProgress: a progress bar that always says what it counts.

A plain QProgressBar shows no text until its first value, so one beside a button ("Knock out each
head", "Cancel the sweep") read as an empty text box nobody could type in. This one says that
nothing has run yet (``idle``), or not for the settings on screen (``stale``), how far a run is
(``running``, a QProgressBar format such as "layer %v of %m"), that it ended (``done``) or where it
was stopped (``stopped``). It asks for the width of its longest text, so none is cut.
"""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import QSize
from PySide6.QtWidgets import QAbstractButton, QProgressBar

TEXT_MARGIN_CHARS = 2  # average characters of room beside the text, within the frame


class RunProgress(QProgressBar):
    def __init__(
        self,
        idle: str,
        running: str,
        done: str,
        stopped: str = "stopped at %p%",
        stale: str = "",
        what: str = "",
        parent=None,
    ):
        super().__init__(parent)
        self.texts = {"idle": idle, "running": running, "done": done, "stopped": stopped}
        self.texts["stale"] = stale or idle
        self.state = "idle"
        if what:
            self.setToolTip(what)
        self.idle()

    def idle(self, stale: bool = False) -> None:
        """Nothing run (``stale``: not for what is on screen now): an empty bar that says so."""
        self.state = "idle"
        self.setRange(0, 1)
        self.setValue(0)
        self.setFormat(self.texts["stale" if stale else "idle"])

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

    def text_room(self) -> int:
        """Pixels for the longest of its texts (numbers as wide as 100 of 100) and a margin."""
        metrics = self.fontMetrics()
        samples = list(self.texts.values())
        for code in ("%p", "%v", "%m"):
            samples = [text.replace(code, "100") for text in samples]
        widest = max(metrics.horizontalAdvance(text) for text in samples)
        return widest + TEXT_MARGIN_CHARS * metrics.averageCharWidth()

    def sizeHint(self) -> QSize:
        hint = super().sizeHint()
        return QSize(max(hint.width(), self.text_room()), hint.height())

    def minimumSizeHint(self) -> QSize:
        """As wide as the longest of its texts, so none is cut (Qt's asks sizeHint for its width)."""
        hint = super().minimumSizeHint()
        return QSize(max(hint.width(), self.text_room()), hint.height())


def show_runs(
    live, progress: RunProgress, cancel: QAbstractButton, when: Callable[[], bool] = lambda: True
) -> None:
    """``progress`` counts the background computes of ``live`` (an app.panels.step.Live; a compute
    reports its total when it ends) and says "not run" when one is refused; ``cancel`` stops the
    one running, the bar saying where, the controls back on the state on screen. ``when``: only
    while it says so (e.g. the state asks for a long run), the other computes left uncounted."""

    def busy(running: bool) -> None:
        running = running and when()
        cancel.setEnabled(running)
        if running:
            progress.start()
        elif progress.state == "running":  # refused: a finished compute has counted itself done
            progress.idle(stale=True)

    def stop() -> None:
        if live.task is not None:
            progress.stopped()
            live.cancel()

    cancel.setEnabled(False)
    cancel.clicked.connect(stop)
    live.busy.connect(busy)
    live.progressed.connect(lambda done, total: when() and progress.progressed(done, total))
