"""Panel "Next token": a real decoder language model (SmolLM2-135M) one token at a time:
predictions, temperature / top-k / top-p, generation, the KV cache, grouped-query attention.

Two live states drive the five steps (state.py): the run (model + prompt, prefilled in the
worker) and the sampling settings (checked on the UI thread, never re-running the model).
Loading, adding SmolLM2, each decode step and the timing run in the worker through buttons; a
decode step extends the run's Generation in place and then announces the run again.
"""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import QTimer
from PySide6.QtWidgets import (
    QComboBox,
    QFileDialog,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QProgressBar,
    QPushButton,
)

from app import worker
from app.panels.base import Panel
from app.panels.binding import bind
from app.panels.model_add import SmolLM2Adder
from app.panels.next_token.generate import GeneratePage
from app.panels.next_token.gqa import GroupsPage
from app.panels.next_token.kv_cache import CachePage
from app.panels.next_token.predictions import PredictionsPage
from app.panels.next_token.state import (
    DEFAULT_PROMPT,
    RunState,
    SamplingState,
    compute_run,
    compute_sampling,
    snapshot,
    visible,
)
from app.panels.next_token.temperature import TemperaturePage
from app.panels.step import Live
from app.settings import settings
from app.widgets.reflow_grid import ReflowGrid
from app.widgets.text import note
from core import smollm2
from core.decoder import context_limit
from core.sampling import Draws

SMOLLM2 = smollm2.KEY
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

    def __init__(self, parent=None):
        super().__init__(parent)
        self.run = Live(RunState(), compute_run, background=True)
        self.sampling = Live(SamplingState(), compute_sampling)
        self.task: worker.Task | None = None  # a load, add, decode step or timing in progress
        self.task_kind = ""
        self.serial = 0  # results of cancelled or superseded tasks are dropped
        self.preview = Draws(0)  # step 2's draws: start again with every new run or setting
        self.draws = Draws(0)  # the appended tokens' draws: one generator per generation
        self.draws_for = None  # the Generation they belong to
        self._build_model_row()
        self.predictions = PredictionsPage(self.run, self.sampling)
        self.temperature = TemperaturePage(self.run, self.sampling)
        self.generate = GeneratePage(self.run, self.sampling)
        self.cache = CachePage(self.run)
        self.groups = GroupsPage(self.run)
        self.add_steps(self.predictions, self.temperature, self.generate, self.cache, self.groups)
        self.offer: tuple[str, str] | None = None  # why there is no model and what to do
        self.run.changed.connect(self._new_draws)
        self.run.changed.connect(self._keep_offer)
        self.sampling.changed.connect(self._new_draws)
        self.run.busy.connect(lambda on: on and self.generate.auto_button.setChecked(False))
        self.temperature.draw_token.connect(self.draw_sample)
        self.temperature.open_scale.connect(lambda: self.openPanel.emit("scale"))
        self.generate.append_sample.connect(self.append_sample)
        self.generate.append_choice.connect(self.append_choice)
        self.generate.undo.connect(self.undo)
        self.generate.auto_button.toggled.connect(lambda on: on and self._auto_step())
        self.cache.measure.connect(self.measure)
        self.set_step(0)

    @property
    def model(self):
        return self.run.state.model

    @property
    def generation(self):
        return self.run.result

    def _build_model_row(self) -> None:
        self.model_combo = QComboBox()
        self.model_combo.setMinimumContentsLength(22)
        self.open_button = QPushButton("Open decoder folder…")
        self.adder = SmolLM2Adder(parent=self)
        self.add_button = self.adder.button
        self.progress = QProgressBar()
        self.progress.setMaximumWidth(160)
        self.cancel_button = QPushButton("Cancel")
        self.model_info = note("The model loads when this panel is first shown.")
        for widget in (self.progress, self.cancel_button):
            widget.hide()
        label, info = QLabel("Model"), self.model_info
        combo, open_, add, progress, cancel = (
            self.model_combo,
            self.open_button,
            self.add_button,
            self.progress,
            self.cancel_button,
        )
        row = (label, combo, open_, add, progress, cancel, info)
        wide = [(widget, 0, k, 1) for k, widget in enumerate(row)]
        narrow = (  # larger text: the buttons under the combo, what the model is under them
            (label, 0, 0, 1),
            (combo, 0, 1, 1),
            (open_, 0, 2, 2),
            (add, 1, 0, 2),
            (progress, 1, 2, 1),
            (cancel, 1, 3, 1),
            (info, 2, 0, 4),
        )
        model_row = ReflowGrid(wide, narrow, stretch=(6, 1))
        self.prompt = bind(QLineEdit(DEFAULT_PROMPT), self.run, "prompt")
        prompt_row = QHBoxLayout()
        prompt_row.addWidget(QLabel("Prompt"))
        prompt_row.addWidget(self.prompt, 1)
        # Until a decoder is loaded the steps have nothing to draw; this banner says what to do.
        self.no_model = note(
            "No decoder loaded yet. Add SmolLM2-135M with the button above (once, 93 MB), or open a "
            "decoder folder you already have; every step then shows that model's numbers."
        )
        self.no_model.setStyleSheet("background: #fde9c8; color: #3a2a00; padding: 14px; font-size: 15px;")
        self.body.addLayout(model_row)
        self.body.addWidget(self.no_model)
        self.body.addLayout(prompt_row)
        self._fill_model_combo()
        self.model_combo.activated.connect(lambda i: self.load(self.model_combo.itemData(i)))
        self.open_button.clicked.connect(self.choose_folder)
        self.adder.running.connect(self._adding)
        self.adder.progressed.connect(self._on_progress)
        self.adder.added.connect(lambda: self.load(SMOLLM2))
        self.adder.failed.connect(lambda message: self._on_error("add", message))
        self.cancel_button.clicked.connect(self.cancel)

    def _new_draws(self) -> None:
        """A new run or new settings: step 2's draws start again from the seed."""
        self.preview = Draws(self.sampling.state.seed)

    def _generation_draws(self) -> Draws:
        """The draws of the current generation, seeded once when it starts (or the seed changes),
        so the tokens appended for a prompt, settings and seed are ``predict --generate``'s."""
        seed = self.sampling.state.seed
        if self.draws_for is not self.generation or self.draws.seed != seed:
            self.draws, self.draws_for = Draws(seed), self.generation
        return self.draws

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

    def _offer_add(self, reason: str | None = None) -> None:
        """Offer the Add button, or, where this installation cannot add SmolLM2 (a standalone build,
        no torch), say what to get instead."""
        self.offer = self.adder.offer(reason)
        blocked = smollm2.cannot_add()
        if blocked is not None:
            self.no_model.setText(f"No decoder loaded. {blocked}")
        self._show_model_info()
        self.show_message(*self.offer)

    def _keep_offer(self) -> None:
        """Without a model the offer to add one stays in the message bar (a run clears the bar)."""
        if self.model is None and self.offer is not None:
            self.show_message(*self.offer)

    def _start(self, kind: str, fn, *args, on_result, progress: bool = False, **kwargs) -> None:
        """Run ``fn`` in the worker as the panel's one task; a cancelled task's result is dropped."""
        self.serial += 1
        serial = self.serial
        self.task_kind = kind
        if progress:
            self.progress.setRange(0, 0)
            self.progress.show()
            self.cancel_button.show()

        def landed(result) -> None:
            if serial == self.serial:
                on_result(result)

        def refused(message: str) -> None:
            if serial == self.serial:
                self._on_error(kind, message)

        def ended() -> None:
            if serial == self.serial:
                self.task = None
                self.progress.hide()
                self.cancel_button.hide()

        self.task = worker.run_task(
            fn,
            *args,
            on_result=landed,
            on_error=refused,
            on_progress=self._on_progress if progress else None,
            on_finished=ended,
            **kwargs,
        )

    def _on_progress(self, done: int, total: int) -> None:
        self.progress.setRange(0, total)
        self.progress.setValue(done)
        if self.adder.busy and self.adder.stage(done, total):
            self.model_info.setText(self.adder.stage(done, total))

    def _adding(self, running: bool) -> None:
        """An add started or ended: it is the panel's one task meanwhile."""
        if running:
            self.serial += 1  # a load or step still running is superseded
            self.task, self.task_kind = self.adder.task, "add"
            self.clear_message()
            self.progress.setRange(0, 0)
        elif self.task_kind != "add":
            return  # the load that follows an add has its own progress
        else:
            self.task = None
        self.progress.setVisible(running)
        self.cancel_button.setVisible(running)

    def _on_error(self, kind: str, message: str) -> None:
        self.generate.auto_button.setChecked(False)
        if kind == "add" or (self.model is None and smollm2.ADD_HINT in message):
            self._offer_add(message)
            return
        self.show_message(message)
        self._show_model_info()

    def cancel(self) -> None:
        if self.task is None:
            return
        kind = self.task_kind
        if not self.adder.cancel():
            self.task.cancel()
        self.serial += 1
        self.task = None
        self.progress.hide()
        self.cancel_button.hide()
        what = {"add": "Adding the model", "load": "Loading"}.get(kind, "The step")
        self.show_message(f"{what} was cancelled; nothing changed.", "info")
        self._show_model_info()

    def load(self, source: str) -> None:
        """Load ``source`` ("smollm2" or a folder) in the worker; the current model stays until then."""
        from core import models
        from core.loaded_models import shared

        self.model_info.setText(f"Loading {smollm2.NAME if source == SMOLLM2 else Path(source).name}…")
        self._start(  # shared: the Inside a decoder and Real model panels use the same copy
            "load", shared.get, source, expect=models.DECODER, on_result=self._on_loaded, progress=True
        )

    def add_smollm2(self) -> None:
        """Download and convert SmolLM2 in the worker; cancel stops it and leaves nothing behind."""
        self.adder.start()

    def choose_folder(self) -> None:
        folder = QFileDialog.getExistingDirectory(self, "Open a decoder model folder")
        if folder:
            self.load(folder)

    def _on_loaded(self, model) -> None:
        self.offer = None
        self.add_button.hide()
        self.clear_message()
        s = settings()
        s.setValue("next_token/last", model.source)
        if model.source != SMOLLM2:
            recent = [model.source, *(r for r in self._recent() if r != model.source)]
            s.setValue("next_token/recent", recent[:MAX_RECENT])
        self.groups.layer_spin.setMaximum(model.n_layers)
        self.run.apply(model=model)
        self._fill_model_combo(model.source)
        self._show_model_info(model)

    def _show_model_info(self, m=None) -> None:
        m = m or self.model
        self.no_model.setVisible(m is None)
        if m is None:
            self.model_info.setText("No decoder loaded.")
            return
        kv = f" sharing {m.n_kv_heads} key/value heads" if m.n_kv_heads != m.n_heads else ""
        origin = f" · {smollm2.ORIGIN}" if m.source == SMOLLM2 else ""
        self.model_info.setText(
            f"{m.name}: {m.n_layers} layers × {m.n_heads} heads{kv} · reads up to {context_limit(m)} "
            f"tokens{origin}"
        )

    def _recent(self) -> list[str]:
        value = settings().value("next_token/recent", [])
        return [value] if isinstance(value, str) else list(value or [])

    def _fill_model_combo(self, current: str = SMOLLM2) -> None:
        combo = self.model_combo
        combo.blockSignals(True)
        combo.clear()
        combo.addItem(smollm2.NAME, SMOLLM2)
        for folder in self._recent():
            combo.addItem(Path(folder).name, folder)
        combo.setCurrentIndex(max(combo.findData(current), 0))
        combo.blockSignals(False)

    # --- sampling and generation ------------------------------------------------------------
    def _snapshot(self):
        return None if self.generation is None else snapshot(self.generation, self.sampling.result)

    def draw_sample(self) -> None:
        snap = self._snapshot()
        if snap is not None:
            token, prob = self.preview.draw(snap.dist)
            self.temperature.show_sample(visible(self.model.tokenizer.decode([token])), prob)

    def append_sample(self) -> None:
        snap = self._snapshot()
        if snap is not None and self._can_append():
            at = len(self.generation.chosen)  # the k-th generated token takes the seed's k-th number
            self._append(*self._generation_draws().draw(snap.dist, at))

    def append_choice(self, index: int) -> None:
        snap = self._snapshot()
        if snap is not None and 0 <= index < len(snap.choices):
            self._append(snap.choices[index].id, snap.choices[index].prob)

    def _can_append(self) -> bool:
        """One step at a time: nothing runs now (a draw made now is not lost)."""
        return self.task is None and self.run.task is None and self.generation is not None

    def _append(self, token: int, prob: float) -> None:
        g = self.generation
        if not self._can_append():
            return  # one step at a time
        if g.length >= context_limit(g.model):
            self.generate.auto_button.setChecked(False)
            self.show_message(
                f"The context is full ({context_limit(g.model)} tokens); undo a step or shorten the prompt"
            )
            return
        self._start("step", g.append, token, prob, on_result=lambda _: self._on_step(g, token))

    def _on_step(self, generation, token: int) -> None:
        if generation is not self.generation:
            return  # the prompt changed meanwhile
        self.run.refresh()
        auto = self.generate.auto_button
        if token == generation.model.tokenizer.eos_token_id:
            auto.setChecked(False)
            self.show_message("The model chose its end-of-text token; undo it to go on.", "info")
        elif auto.isChecked():
            QTimer.singleShot(AUTO_DELAY_MS, self._auto_step)

    def _auto_step(self) -> None:
        if self.generate.auto_button.isChecked() and self.task is None:
            self.append_sample()

    def undo(self) -> None:
        g = self.generation
        if self.task is None and g is not None and g.undo() is not None:
            self.clear_message()
            self.run.refresh()

    def measure(self) -> None:
        g = self.generation
        if self.task is not None or g is None:
            return
        from core import decoder

        self._start("timing", decoder.time_decode, g.model, g.ids, g.length, on_result=self.cache.show_timing)

    # --- smoke, tests, export ---------------------------------------------------------------
    def exercise(self) -> None:
        worker.wait_idle(300)
        if self.model is None:
            super().exercise()
            return

        def settle(action, *args):
            action(*args)
            worker.wait_idle(120)

        for text in ("", "word " * 9000, "unbelievably 👍 日本語 שלום", DEFAULT_PROMPT):
            settle(self.prompt.setText, text)
        t = self.temperature
        for value in (0.05, 5.0, 0.7):
            t.temperature.setValue(value)
        for value in (1, 1000, 0):
            t.top_k.setValue(value)
        for value in (0.05, 0.9):
            t.top_p.setValue(value)
        t.draw_button.click()
        for _ in range(3):
            settle(self.append_sample)
        settle(self.append_choice, 0)
        self.undo()
        settle(self.measure)
        self.groups.layer_spin.setValue(self.model.n_layers)
        self.groups.layer_spin.setValue(1)
        super().exercise()
        for text in ("", DEFAULT_PROMPT):  # the prompt alone again, as a student starts
            settle(self.prompt.setText, text)
        self.set_step(1)

    def export(self):
        return {
            "predictions": self.predictions.bars,
            "sampling": self.temperature.bars,
            "kv cache": self.cache.cache_map,
            "kv cache size": self.cache.size_plot,
            "shared heads": self.groups.grid,
        }
