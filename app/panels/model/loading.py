"""The Real model panel's model row: choose a model, load it in the worker with progress and
cancel, remember the folders opened. Models come from core.loaded_models, shared with the Next
token and Inside a decoder panels, so a model another panel has loaded appears at once."""

from __future__ import annotations

from functools import partial
from pathlib import Path

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import QComboBox, QFileDialog, QLabel, QProgressBar, QPushButton, QWidget

from app import worker
from app.settings import settings
from app.widgets.reflow_grid import ReflowGrid
from app.widgets.text import note
from core import smollm2
from core.loaded_models import shared

BUNDLED = "minilm"
BUNDLED_NAME = "all-MiniLM-L6-v2 (bundled)"
MAX_RECENT = 8


class ModelRow(QWidget):
    """The model combo, Open, a progress bar with Cancel, and what the loaded model is."""

    loaded = Signal(object)  # core.models.LoadedModel, now the panel's model
    said = Signal(str, str)  # (text, level) for the message bar

    def __init__(self):
        super().__init__()
        self.model = None  # core.models.LoadedModel once loaded
        self.task: worker.Task | None = None
        self.generation = 0  # results of earlier loads are ignored once this moves on
        self.fallback_note = ""  # why the bundled model was loaded instead of the last one
        self.combo = QComboBox()
        self.combo.setMinimumContentsLength(24)
        self.open_button = QPushButton("Open model folder…")
        self.progress = QProgressBar()
        self.progress.setMaximumWidth(160)
        self.cancel_button = QPushButton("Cancel")
        self.info = note("The model loads when this panel is first shown.")
        for widget in (self.progress, self.cancel_button):
            widget.hide()
        label, items = QLabel("Model"), (self.combo, self.open_button, self.progress, self.cancel_button)
        wide = [(widget, 0, k, 1) for k, widget in enumerate((label, *items, self.info))]
        narrow = (  # larger text: what the model is under the combo box and the buttons
            *((widget, 0, k, 1) for k, widget in enumerate((label, *items))),
            (self.info, 1, 0, 5),
        )
        row = ReflowGrid(wide, narrow, stretch=(5, 4))
        row.setContentsMargins(0, 0, 0, 0)
        self.setLayout(row)
        self._fill_combo()
        self.combo.activated.connect(lambda i: self.load(self.combo.itemData(i)))
        self.open_button.clicked.connect(self.choose_folder)
        self.cancel_button.clicked.connect(self.cancel)

    def load_last(self) -> None:
        """Load the model used last time (the bundled one if it has gone)."""
        last = str(settings().value("model/last", BUNDLED))
        added = last == smollm2.KEY and smollm2.installed_folder() is not None
        self.load(last if last == BUNDLED or added or Path(last).is_dir() else BUNDLED)

    def load(self, source: str) -> None:
        """Load ``source`` ("minilm", "smollm2" or a folder) in the background; the current model
        stays until the new one is ready. A model already in memory is used at once."""
        self._stop()
        self.generation += 1
        model = shared.peek(source)
        if model is not None:
            self._on_loaded(model)
            return
        self.progress.setRange(0, 0)
        self.progress.show()
        self.cancel_button.show()
        names = {BUNDLED: BUNDLED_NAME, smollm2.KEY: smollm2.NAME}
        self.info.setText(f"Loading {names.get(source) or Path(source).name}…")
        self.task = worker.run_task(
            shared.get,
            source,
            on_result=partial(self._on_loaded, generation=self.generation),
            on_error=partial(self._on_error, source=source, generation=self.generation),
            on_progress=self._on_progress,
        )

    def choose_folder(self) -> None:
        """Ask for a local Hugging Face model folder and load it."""
        folder = QFileDialog.getExistingDirectory(self, "Open a Hugging Face model folder")
        if folder:
            self.load(folder)

    def cancel(self) -> None:
        if self.task is not None:
            self._stop()
            self.generation += 1
            self._show_info()
            self.said.emit("Loading was cancelled; the previous model stays.", "info")

    def _stop(self) -> None:
        """Forget the load in progress, if any; a late result of it is ignored by its generation."""
        if self.task is not None:
            self.task.cancel()
            self.task = None
        self.progress.hide()
        self.cancel_button.hide()

    def _on_progress(self, done: int, total: int) -> None:
        self.progress.setRange(0, total)
        self.progress.setValue(done)

    def _on_error(self, message: str, source: str, generation: int) -> None:
        if generation != self.generation:
            return
        self._stop()
        if self.model is None and source != BUNDLED:  # e.g. the last folder has gone: fall back
            self.fallback_note = f"{message} Showing the bundled model instead."
            self.load(BUNDLED)
            return
        self.said.emit(message, "error")
        self._show_info()
        self._fill_combo()

    def _on_loaded(self, model, generation: int | None = None) -> None:
        if generation is not None and generation != self.generation:
            return  # cancelled or replaced by a newer load
        self._stop()
        self.model = model
        s = settings()
        s.setValue("model/last", model.source)
        if model.source not in (BUNDLED, smollm2.KEY):
            recent = [model.source, *[r for r in self._recent() if r != model.source]]
            s.setValue("model/recent", recent[:MAX_RECENT])
        self._fill_combo()
        self._show_info()
        self.loaded.emit(model)

    def _show_info(self) -> None:
        m = self.model
        if m is None:
            self.info.setText("No model loaded.")
            return
        kind = "decoder: looks back only" if m.is_causal else "encoder: looks both ways"
        self.info.setText(f"{m.n_layers} layers × {m.n_heads} heads · {kind} · up to {m.max_tokens} tokens")

    def _recent(self) -> list[str]:
        value = settings().value("model/recent", [])
        return [value] if isinstance(value, str) else list(value or [])

    def _fill_combo(self) -> None:
        combo = self.combo
        combo.blockSignals(True)
        combo.clear()
        combo.addItem(BUNDLED_NAME, BUNDLED)
        if smollm2.installed_folder() is not None:  # the decoder added for the Next token panel
            combo.addItem(smollm2.NAME, smollm2.KEY)
        for folder in self._recent():
            combo.addItem(Path(folder).name, folder)
            combo.setItemData(combo.count() - 1, folder, Qt.ItemDataRole.ToolTipRole)
        current = combo.findData(self.model.source if self.model else BUNDLED)
        combo.setCurrentIndex(max(current, 0))
        combo.blockSignals(False)
