"""The Next token panel: the model row and the prompt on top, one page per lecture step below.

The model loads, runs and decodes in the worker; settings changes (temperature, top-k, top-p)
only re-express the last logits on the UI thread. A newer prompt replaces an older run; the
previous result stays on screen until the new one arrives.
"""

from __future__ import annotations

from functools import partial
from pathlib import Path

import numpy as np
from PySide6.QtCore import QTimer
from PySide6.QtWidgets import (
    QComboBox,
    QFileDialog,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QProgressBar,
    QPushButton,
    QStackedWidget,
    QWidget,
)

from app import worker
from app.panels.base import Panel
from app.panels.next_token.generate import GeneratePage
from app.panels.next_token.gqa import GroupsPage
from app.panels.next_token.kv_cache import CachePage
from app.panels.next_token.predictions import PredictionsPage
from app.panels.next_token.sampling_step import SamplingPage
from app.panels.next_token.view import Snapshot, visible
from app.settings import settings
from core import smollm2
from core.decoder import context_limit

DEFAULT_PROMPT = "The capital of France is"
SMOLLM2 = smollm2.KEY
CANDIDATES = 10  # tokens listed in steps 2 and 3
AUTO_DELAY_MS = 250  # pause between automatic steps, so each one can be read
MAX_RECENT = 8


class NextTokenPanel(Panel):
    key = "next_token"
    title = "Next token"
    steps = (
        "Predictions",
        "Temperature, top-k, top-p",
        "Generate",
        "The KV cache",
        "Grouped-query attention",
    )
    file_actions = (("Open &decoder folder…", "choose_folder"),)

    def __init__(self, parent=None):
        super().__init__(parent)
        self.model = None  # core.models.LoadedModel (a decoder) once loaded
        self.generation = None  # core.decoder.Generation for the current prompt
        self.snapshot: Snapshot | None = None
        self.task: worker.Task | None = None  # the load, add, run or decode step in progress
        self.task_kind = ""
        self.run_pending = False
        self.serial = 0  # results of superseded tasks are ignored
        self.rng = np.random.default_rng(0)
        self._build()
        self.set_step(0)

    # --- layout -----------------------------------------------------------------------------
    def _build(self) -> None:
        self.model_combo = QComboBox()
        self.model_combo.setMinimumContentsLength(22)
        self.open_button = QPushButton("Open decoder folder…")
        self.add_button = QPushButton(f"Add {smollm2.NAME[:12]} (93 MB download, about a minute)")
        self.progress = QProgressBar()
        self.progress.setMaximumWidth(160)
        self.cancel_button = QPushButton("Cancel")
        self.model_info = QLabel("The model loads when this panel is first shown.")
        for widget in (self.progress, self.cancel_button, self.add_button):
            widget.hide()
        model_row = QHBoxLayout()
        model_row.addWidget(QLabel("Model"))
        model_row.addWidget(self.model_combo)
        model_row.addWidget(self.open_button)
        model_row.addWidget(self.add_button)
        model_row.addWidget(self.progress)
        model_row.addWidget(self.cancel_button)
        model_row.addWidget(self.model_info, 1)
        self.prompt = QLineEdit(DEFAULT_PROMPT)
        prompt_row = QHBoxLayout()
        prompt_row.addWidget(QLabel("Prompt"))
        prompt_row.addWidget(self.prompt, 1)

        self.predictions = PredictionsPage()
        self.sampling = SamplingPage()
        self.generate = GeneratePage()
        self.cache = CachePage()
        self.groups = GroupsPage()
        self.pages = QStackedWidget()
        for page in self._pages():
            self.pages.addWidget(page)
        self.body.addLayout(model_row)
        self.body.addLayout(prompt_row)
        self.body.addWidget(self.pages, 1)

        self._fill_model_combo()
        self.model_combo.activated.connect(lambda i: self.load(self.model_combo.itemData(i)))
        self.open_button.clicked.connect(self.choose_folder)
        self.add_button.clicked.connect(self.add_smollm2)
        self.cancel_button.clicked.connect(self.cancel)
        self.prompt.textChanged.connect(self.request_run)
        self.sampling.changed.connect(self._on_settings)
        self.sampling.draw.connect(self.draw_sample)
        self.sampling.open_scale.connect(lambda: self.openPanel.emit("scale"))
        self.generate.append_sample.connect(self.append_sample)
        self.generate.append_choice.connect(self.append_choice)
        self.generate.undo.connect(self.undo)
        self.generate.auto_button.toggled.connect(self._on_auto)
        self.cache.measure.connect(self.measure)

    def _pages(self) -> tuple[QWidget, ...]:
        return (self.predictions, self.sampling, self.generate, self.cache, self.groups)

    def show_step(self, i: int) -> None:
        self.pages.setCurrentIndex(i)

    # --- models -----------------------------------------------------------------------------
    def showEvent(self, event) -> None:
        super().showEvent(event)
        if self.model is None and self.task is None:
            last = str(settings().value("next_token/last", SMOLLM2))
            if last != SMOLLM2 and Path(last).is_dir():
                self.load(last)
            elif smollm2.installed_folder() is not None:
                self.load(SMOLLM2)
            else:
                self._offer_add()

    def _offer_add(self, reason: str = "") -> None:
        self.add_button.show()
        self.model_info.setText("No decoder loaded.")
        self.show_message(
            reason
            or f"{smollm2.NAME} is not on this computer yet. Press Add to download and convert it once "
            "(93 MB), or open a decoder folder you already have.",
            "info",
        )

    def _start(self, kind: str, fn, *args, on_result, progress: bool = False, **kwargs) -> None:
        """Run ``fn`` in the worker as the panel's one task; a superseded task's result is dropped."""
        self.serial += 1
        serial = self.serial
        self.task_kind = kind
        if progress:
            self.progress.setRange(0, 0)
            self.progress.show()
            self.cancel_button.show()
        self.task = worker.run_task(
            fn,
            *args,
            on_result=partial(self._if_current, serial, on_result),
            on_error=partial(self._if_current, serial, partial(self._on_error, kind)),
            on_progress=self._on_progress if progress else None,
            on_finished=partial(self._ended, serial),
            **kwargs,
        )

    def _if_current(self, serial: int, then, value) -> None:
        if serial == self.serial:
            then(value)

    def _ended(self, serial: int) -> None:
        """The task ``serial`` is over; a prompt typed meanwhile runs now."""
        if serial != self.serial:
            return
        self.task = None
        self.progress.hide()
        self.cancel_button.hide()
        if self.run_pending:
            self.run_pending = False
            self.request_run()

    def _on_progress(self, done: int, total: int) -> None:
        self.progress.setRange(0, total)
        self.progress.setValue(done)
        if self.task_kind == "add" and done < total:
            self.model_info.setText(smollm2.STEPS[done] + "…")

    def _on_error(self, kind: str, message: str) -> None:
        self.generate.auto_button.setChecked(False)
        if kind == "add" or (kind == "load" and self.model is None and smollm2.ADD_HINT in message):
            self._offer_add(message)
            self.show_message(message)
            return
        self.show_message(message)
        self._show_model_info()

    def cancel(self) -> None:
        if self.task is None:
            return
        self.task.cancel()
        kind = self.task_kind
        self.serial += 1  # a late result of the cancelled task is dropped
        self.task = None
        self.progress.hide()
        self.cancel_button.hide()
        if kind == "add":
            self.add_button.show()
        what = {"add": "Adding the model", "load": "Loading"}.get(kind, "The run")
        self.show_message(f"{what} was cancelled; nothing changed.", "info")
        self._show_model_info()

    def load(self, source: str) -> None:
        """Load ``source`` ("smollm2" or a folder) in the worker; the current model stays until then."""
        from core import models

        self.model_info.setText(f"Loading {smollm2.NAME if source == SMOLLM2 else Path(source).name}…")
        self._start(
            "load", models.load_model, source, expect=models.DECODER, on_result=self._on_loaded, progress=True
        )

    def add_smollm2(self) -> None:
        """Download and convert SmolLM2 in the worker (cancel stops it, leaving nothing behind)."""
        self.add_button.hide()
        self.clear_message()
        self._start("add", smollm2.install, on_result=lambda _: self.load(SMOLLM2), progress=True)

    def choose_folder(self) -> None:
        folder = QFileDialog.getExistingDirectory(self, "Open a decoder model folder")
        if folder:
            self.load(folder)

    def _on_loaded(self, model) -> None:
        self.model = model
        self.add_button.hide()
        self.clear_message()
        s = settings()
        s.setValue("next_token/last", model.source)
        if model.source != SMOLLM2:
            s.setValue(
                "next_token/recent",
                [model.source, *[r for r in self._recent() if r != model.source]][:MAX_RECENT],
            )
        self._fill_model_combo()
        self._show_model_info()
        self.generation = None
        self.request_run()

    def _show_model_info(self) -> None:
        m = self.model
        if m is None:
            self.model_info.setText("No decoder loaded.")
            return
        kv = f" sharing {m.n_kv_heads} key/value heads" if m.n_kv_heads != m.n_heads else ""
        self.model_info.setText(
            f"{m.name}: {m.n_layers} layers × {m.n_heads} heads{kv} · reads up to {context_limit(m)} tokens"
        )

    def _recent(self) -> list[str]:
        value = settings().value("next_token/recent", [])
        return [value] if isinstance(value, str) else list(value or [])

    def _fill_model_combo(self) -> None:
        combo = self.model_combo
        combo.blockSignals(True)
        combo.clear()
        combo.addItem(smollm2.NAME, SMOLLM2)
        for folder in self._recent():
            combo.addItem(Path(folder).name, folder)
        current = combo.findData(self.model.source if self.model else SMOLLM2)
        combo.setCurrentIndex(max(current, 0))
        combo.blockSignals(False)

    # --- running ----------------------------------------------------------------------------
    def request_run(self) -> None:
        """Run the model on the prompt; while another task runs, the newest prompt waits."""
        if self.model is None:
            return
        if self.task is not None:
            self.run_pending = True
            return
        from core import decoder

        self.generate.auto_button.setChecked(False)
        self._start(
            "run", decoder.predict, self.model, self.prompt.text(), keep_cache=True, on_result=self._on_run
        )

    def _on_run(self, prediction) -> None:
        from core.decoder import Generation

        self.generation = Generation(self.model, prediction)
        self.rng = np.random.default_rng(self.sampling.seed.value())
        if prediction.dropped:
            self.show_message(
                f"The prompt is longer than the {context_limit(self.model)} tokens read at once here; "
                f"its first {prediction.dropped} tokens were left out.",
                "warning",
            )
        else:
            self.clear_message()
        self.refresh()

    def _on_settings(self, _settings) -> None:
        self.rng = np.random.default_rng(self.sampling.seed.value())
        self.refresh()

    def refresh(self) -> None:
        """Re-express the current logits under the settings and redraw every page (no model run)."""
        from core import sampling

        if self.generation is None:
            return
        try:
            s = self.sampling.settings()
        except ValueError as exc:
            self.show_message(str(exc))
            return
        dist = sampling.reshape(self.generation.logits, s.temperature, s.top_k, s.top_p)
        choices, rest = sampling.top(dist, CANDIDATES)
        labels = [visible(self.model.tokenizer.decode([c.id])) for c in choices]
        self.snapshot = Snapshot(self.model, self.generation, dist, choices, rest, labels)
        for page in self._pages():
            page.show(self.snapshot)

    # --- sampling and generation ------------------------------------------------------------
    def _draw(self) -> tuple[int, float]:
        from core import sampling

        token = sampling.sample(self.snapshot.dist, self.rng)
        return token, float(self.snapshot.dist.probs[token])

    def draw_sample(self) -> None:
        if self.snapshot is None:
            return
        token, prob = self._draw()
        self.sampling.show_sample(visible(self.model.tokenizer.decode([token])), prob)

    def append_sample(self) -> None:
        if self.snapshot is not None:
            self._append(*self._draw())

    def append_choice(self, index: int) -> None:
        if self.snapshot is not None and 0 <= index < len(self.snapshot.choices):
            choice = self.snapshot.choices[index]
            self._append(choice.id, choice.prob)

    def _append(self, token: int, prob: float) -> None:
        if self.task is not None or self.generation is None:
            return  # one step at a time
        g = self.generation
        if g.length >= context_limit(self.model):
            self.generate.auto_button.setChecked(False)
            self.show_message(
                f"The context is full ({context_limit(self.model)} tokens); undo a step or shorten the prompt"
            )
            return
        self._start("step", g.append, token, prob, on_result=lambda _: self._on_step(g, token))

    def _on_step(self, generation, token: int) -> None:
        if generation is not self.generation:
            return
        self.refresh()
        auto = self.generate.auto_button
        if token == self.model.tokenizer.eos_token_id:
            auto.setChecked(False)
            self.show_message("The model chose its end-of-text token; undo it to go on.", "info")
        elif auto.isChecked():
            QTimer.singleShot(AUTO_DELAY_MS, self._auto_step)

    def _auto_step(self) -> None:
        if self.generate.auto_button.isChecked() and self.task is None:
            self.append_sample()

    def _on_auto(self, on: bool) -> None:
        if on:
            self._auto_step()

    def undo(self) -> None:
        if self.task is None and self.generation is not None and self.generation.undo() is not None:
            self.clear_message()
            self.refresh()

    def measure(self) -> None:
        if self.task is not None or self.generation is None:
            return
        from core import decoder

        text = self.model.tokenizer.decode(self.generation.ids)
        self._start(
            "timing",
            decoder.time_decode,
            self.model,
            text,
            self.generation.length,
            on_result=self.cache.show_timing,
        )

    # --- smoke, tests, export ---------------------------------------------------------------
    def exercise(self) -> None:
        worker.wait_idle(300)
        if self.model is None:
            super().exercise()
            return

        def settle(action, *args):
            action(*args)
            worker.wait_idle(120)

        settle(self.prompt.setText, "")
        settle(self.prompt.setText, "word " * 9000)
        settle(self.prompt.setText, "unbelievably 👍 日本語 שלום")
        settle(self.prompt.setText, DEFAULT_PROMPT)
        for value in (0.05, 5.0, 0.7):
            self.sampling.temperature.setValue(value)
        for value in (1, 1000, 0):
            self.sampling.top_k.setValue(value)
        for value in (0.05, 0.9):
            self.sampling.top_p.setValue(value)
        self.sampling.draw_button.click()
        for _ in range(3):
            settle(self.append_sample)
        settle(self.append_choice, 0)
        self.undo()
        settle(self.measure)
        self.groups.layer_spin.setValue(self.model.n_layers)
        self.groups.layer_spin.setValue(1)
        super().exercise()
        settle(self.request_run)  # back to the prompt alone, as a student would start
        self.set_step(1)

    def export(self) -> dict[str, QWidget]:
        return {
            "predictions": self.predictions.bars,
            "sampling": self.sampling.bars,
            "kv cache": self.cache.cache_map,
            "kv cache size": self.cache.size_plot,
            "shared heads": self.groups.grid,
        }
