"""A panel that opens its model through the shared model row (``self.row``, made by the
subclass): the model used last loads when the panel is first shown, File → Open folder… and
``use_model`` go through the row, and a step that fails for want of an added model offers its
Add button."""

from __future__ import annotations

from PySide6.QtWidgets import QPushButton, QWidget

from app.panels.base import Panel
from app.panels.model_row import ModelRow
from app.widgets.progress import RunProgress, show_runs


class RowPanel(Panel):
    row: ModelRow

    def follow_row(self, live) -> None:
        """A model the row loads runs in ``live`` (an app.panels.step.Live with a ``source`` field);
        the row's messages and ``live``'s refusals reach the message bar, a missing SmolLM2 offers Add."""

        def run_on(model) -> None:
            if model.source != live.wanted.source:
                live.apply(source=model.source)

        self.row.loaded.connect(run_on)
        self.row.said.connect(self.show_message)
        live.failed.connect(self.offer_missing)  # after the message bar's slot

    @staticmethod
    def runs_of(live) -> tuple[QWidget, QPushButton]:
        """A progress bar and a Cancel button that follow ``live``'s background computes."""
        progress = RunProgress("not run yet", "%v of %m runs", "done", "stopped at %v of %m",
                               "not run: see the message above")  # fmt: skip
        cancel = QPushButton("Cancel")
        show_runs(live, progress, cancel)
        return progress, cancel

    def showEvent(self, event) -> None:
        super().showEvent(event)
        if self.row.model is None and not self.row.busy:
            self.row.load_last()

    def choose_folder(self) -> None:
        self.row.choose_folder()

    def use_model(self, source: str) -> None:
        """Open ``source`` (a key, a folder or a cache id) through the row; the steps follow."""
        self.row.load(source)

    def offer_missing(self, why: str) -> None:
        """A step could not run: with no model yet, offer to add the model ``why`` names as missing."""
        if self.row.model is None:
            self.row.offer_missing(why)
