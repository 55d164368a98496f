"""A panel that opens its model through the shared model row (``self.row``, made by the
subclass): the model used last loads when the panel is first shown, File → Open folder… and
``use_model`` go through the row, and a step that fails for want of SmolLM2 offers the Add button."""

from __future__ import annotations

from app.panels.base import Panel
from app.panels.model_row import ModelRow
from core.models import smollm2


class RowPanel(Panel):
    row: ModelRow

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
        """A step could not run: with no model yet, offer to add SmolLM2 where it is missing."""
        if self.row.model is None and smollm2.ADD_HINT in why:
            self.row.offer_add()
