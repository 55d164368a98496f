"""The one model row of every real-model panel (Real model, Next token, Inside a decoder):
the known models of the panel's kind (core's registry: the bundled MiniLM, SmolLM2, folders
opened before, the local Hugging Face cache), Open folder…, Add SmolLM2 or Gemma 3 where missing,
a progress bar with Cancel, and what the loaded model is.

    row = ModelRow(models.DECODER, "next_token", default=smollm2.KEY)
    row.loaded.connect(use)        # a core.models.LoadedModel, loaded in the worker
    row.said.connect(show)         # (text, level) for the panel's message bar
    row.load_last()                # the model used last time in this panel

Models come from core.models.loaded, shared by the panels, so a model another panel has loaded
appears at once. Only the newest load lands; the current model stays until it does.
"""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import QComboBox, QFileDialog, QLabel, QProgressBar, QPushButton, QWidget

from app import worker
from app.panels.model_add import ModelAdder
from app.panels.model_choices import fill_model_box
from app.settings import settings
from app.widgets.reflow_grid import ReflowGrid
from app.widgets.text import note
from core.models import BUNDLED, DECODER, smollm2
from core.models.loaded import shared
from core.models.registry import ADDED, BUNDLED_NAME

MAX_RECENT = 8
ToolTip = Qt.ItemDataRole.ToolTipRole
KNOWN = {BUNDLED: BUNDLED_NAME, **{model.KEY: model.NAME for model in ADDED}}


class ModelRow(QWidget):
    """Choose, open or add a model of ``kind`` (None: any) and load it in the worker."""

    loaded = Signal(object)  # core.models.LoadedModel, now the panel's model
    said = Signal(str, str)  # (text, level) for the message bar

    def __init__(self, kind: str | None, key: str, default: str = BUNDLED, fallback: str | None = None):
        super().__init__()
        self.kind, self.key, self.default, self.fallback = kind, key, default, fallback
        self.model = None  # core.models.LoadedModel once loaded
        self.loads = worker.Newest()
        self.fallback_note = ""  # why the fallback model was loaded instead of the last one
        self.combo = QComboBox()
        self.combo.setMinimumContentsLength(22)
        self.open_button = QPushButton("Open decoder folder…" if kind == DECODER else "Open model folder…")
        self.adder = ModelAdder(parent=self)
        self.add_button = self.adder.button
        self.progress = QProgressBar()
        self.progress.setMaximumWidth(160)
        self.cancel_button = QPushButton("Cancel")
        self.info = note("The model loads when this panel is first shown.")
        self.info.least_chars = 32  # narrower, and it goes under the combo box (larger text)
        for widget in (self.progress, self.cancel_button):
            widget.hide()
        label = QLabel("Model")
        items = (label, self.combo, self.open_button, self.add_button, self.progress, self.cancel_button)
        wide = [(widget, 0, k, 1) for k, widget in enumerate((*items, self.info))]
        narrow = (  # larger text: the buttons under the combo box, what the model is under them
            (label, 0, 0, 1),
            (self.combo, 0, 1, 1),
            (self.open_button, 0, 2, 2),
            (self.add_button, 1, 0, 2),
            (self.progress, 1, 2, 1),
            (self.cancel_button, 1, 3, 1),
            (self.info, 2, 0, 4),
        )
        row = ReflowGrid(wide, narrow, stretch=(6, 4))
        row.setContentsMargins(0, 0, 0, 0)
        self.setLayout(row)
        self.fill()
        self.combo.activated.connect(lambda i: self.load(self.combo.itemData(i)))
        self.open_button.clicked.connect(self.choose_folder)
        self.cancel_button.clicked.connect(self.cancel)
        self.adder.running.connect(self._adding)
        self.adder.progressed.connect(self._on_progress)
        self.adder.said.connect(self.info.setText)
        self.adder.added.connect(lambda: self.load(self.adder.model.KEY))
        self.adder.failed.connect(self._add_failed)

    @property
    def busy(self) -> bool:
        return self.loads.running or self.adder.busy

    def load_last(self) -> None:
        """Load the model used last in this panel (the default when it cannot be found); SmolLM2
        not added yet is offered at once, with no task."""
        last = str(settings().value(f"{self.key}/last", self.default))
        if last != smollm2.KEY or smollm2.installed_folder() is not None:
            self.load(last)
        elif self.fallback not in (None, smollm2.KEY):
            self.load(self.fallback)
        else:
            self.offer_add()

    def load(self, source: str) -> None:
        """Load ``source`` (a key, a folder or a cache id) in the worker; the current model stays
        until the new one is ready. A model already in memory is used at once."""
        self.adder.cancel()
        model = shared.peek(source)
        if model is not None and (self.kind is None or model.kind == self.kind):
            self.loads.cancel()
            self._on_loaded(model)
            return
        self._busy(True)
        self.info.setText(f"Loading {KNOWN.get(source) or Path(source).name}…")
        self.loads.start(
            shared.get,
            source,
            expect=self.kind,
            on_result=self._on_loaded,
            on_error=lambda message: self._on_error(message, source),
            on_progress=self._on_progress,
            on_finished=lambda: self._busy(False),
        )

    def choose_folder(self) -> None:
        """Ask for a local Hugging Face model folder and load it."""
        folder = QFileDialog.getExistingDirectory(self, "Open a Hugging Face model folder")
        if folder:
            self.load(folder)

    def cancel(self) -> None:
        """Stop the load or add in progress; the previous model stays."""
        what = "Adding the model" if self.adder.busy else "Loading"
        if self.adder.cancel() or self.loads.cancel():
            self._busy(False)
            self.show_model()
            self.said.emit(f"{what} was cancelled; the previous model stays.", "info")

    def offer_add(self, reason: str | None = None, model=smollm2) -> None:
        """Offer the Add button for ``model`` (or say what this installation needs instead); the
        loaded model, if any, stays."""
        self.adder.use(model)
        if self.model is None:
            self.info.setText("No decoder loaded: see the message above." if reason else "No decoder loaded.")
        self.said.emit(*self.adder.offer(reason))

    def offer_missing(self, message: str) -> bool:
        """Offer to add the model ``message`` says is missing (True), if it names one."""
        model = next((m for m in ADDED if m.ADD_HINT in message), None)
        if model is not None:
            self.offer_add(model=model)
        return model is not None

    def show_model(self) -> None:
        self.info.setText(self.model.describe() if self.model is not None else "No model loaded.")

    def fill(self) -> None:
        """The combo box: every known model of this row's kind; the added decoders too while they
        are missing (choosing one offers the Add button)."""
        current = self.model.source if self.model is not None else self.default
        fill_model_box(self.combo, self.kind, self.recent(), current)
        for place, source in enumerate((BUNDLED, *KNOWN)):
            wanted = source == self.default or (source != BUNDLED and self.kind != "encoder")
            if wanted and self.combo.findData(source) < 0:
                where = 0 if source == self.default else min(place, self.combo.count())
                self.combo.insertItem(where, KNOWN[source], source)
                self.combo.setItemData(where, "Not on this computer yet: choose it to add it.", ToolTip)

    def _busy(self, on: bool) -> None:
        if on:
            self.progress.setRange(0, 0)
        self.progress.setVisible(on)
        self.cancel_button.setVisible(on)

    def _on_progress(self, done: int, total: int) -> None:
        self.progress.setRange(0, total)
        self.progress.setValue(done)

    def _adding(self, running: bool) -> None:
        if running:
            self.loads.cancel()
            self.info.setText(f"Adding {self.adder.model.NAME}…")
        self._busy(running)

    def _add_failed(self, message: str) -> None:
        self.offer_add(message)

    def _on_error(self, message: str, source: str) -> None:
        if self.offer_missing(message):  # an added model not there yet: its Add button, no fallback
            self.fill()
            return
        if self.model is None and self.fallback is not None and source != self.fallback:
            name = (
                "the bundled model" if self.fallback == BUNDLED else KNOWN.get(self.fallback, self.fallback)
            )
            self.fallback_note = f"{message} Showing {name} instead."
            self.load(self.fallback)
            return
        self.said.emit(message, "error")
        self.show_model()
        self.fill()

    def _on_loaded(self, model) -> None:
        self.model = model
        self.add_button.hide()
        s = settings()
        s.setValue(f"{self.key}/last", model.source)
        if model.source not in KNOWN:
            recent = [model.source, *[r for r in self.recent() if r != model.source]]
            s.setValue(f"{self.key}/recent", recent[:MAX_RECENT])
        self.fill()
        self.show_model()
        self.loaded.emit(model)

    def recent(self) -> list[str]:
        """The folders opened in this row before, the newest first."""
        value = settings().value(f"{self.key}/recent", [])
        return [value] if isinstance(value, str) else list(value or [])
