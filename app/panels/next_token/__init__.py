"""Panel "Next token": a real decoder language model (SmolLM2-135M) one token at a time:
predictions, temperature / top-k / top-p, generation, the KV cache, grouped-query attention.

Three live states drive the five steps (state.py): the run (model + prompt, prefilled in the
worker), the text the steps show (the run's generation, grown one decode step at a time in the
worker: each step a new Generation, never one changed after it is shown) and the sampling
settings (checked on the UI thread, never re-running the model). The shared model row loads or
adds the model; the timing runs in the worker through its button.
"""

from __future__ import annotations

from PySide6.QtCore import QTimer
from PySide6.QtWidgets import QHBoxLayout, QLabel, QLineEdit

from app import worker
from app.panels.binding import bind
from app.panels.model_row import ModelRow
from app.panels.next_token.generate import GeneratePage
from app.panels.next_token.gqa import GroupsPage
from app.panels.next_token.kv_cache import CachePage
from app.panels.next_token.predictions import PredictionsPage
from app.panels.next_token.state import (
    DEFAULT_PROMPT,
    DrawStreams,
    RunState,
    SamplingState,
    TextState,
    compute_run,
    compute_sampling,
    grow,
    snapshot,
)
from app.panels.next_token.temperature import TemperaturePage
from app.panels.row_panel import RowPanel
from app.panels.step import Live
from app.widgets.text import note
from core.interp import prediction
from core.interp.prediction import context_limit, visible
from core.models import DECODER, smollm2

SMOLLM2 = smollm2.KEY
AUTO_DELAY_MS = 250  # pause between automatic steps, so each one can be read


class NextTokenPanel(RowPanel):
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
        self.text = Live(TextState(), grow, background=True)
        self.sampling = Live(SamplingState(), compute_sampling)
        self.row = ModelRow(DECODER, "next_token", default=SMOLLM2, fallback=SMOLLM2)
        self.timing = worker.Newest()  # the KV cache step's timing
        self.streams = DrawStreams()
        self._build_rows()
        self.predictions = PredictionsPage(self.text, self.sampling)
        self.temperature = TemperaturePage(self.text, self.sampling, self.streams)
        self.generate = GeneratePage(self.text, self.sampling)
        self.cache = CachePage(self.text, self.sampling)
        self.groups = GroupsPage(self.text)
        self.add_steps(self.predictions, self.temperature, self.generate, self.cache, self.groups)
        self.offer: tuple[str, str] | None = None  # why there is no model and what to do
        self.run.changed.connect(self._on_run)
        self.run.failed.connect(self.show_message)
        self.text.changed.connect(self._on_text)
        self.sampling.changed.connect(lambda: self.streams.restart(self.sampling.state.seed))
        self.run.busy.connect(lambda on: on and self.generate.stop_auto())
        for live in (self.run, self.text):
            live.failed.connect(lambda _: self.generate.stop_auto())
        self.temperature.draw_token.connect(self.draw_sample)
        self.temperature.open_scale.connect(lambda: self.openPanel.emit("scale"))
        self.generate.append_sample.connect(self.append_sample)
        self.generate.append_choice.connect(self.append_choice)
        self.generate.undo.connect(self.undo)
        self.generate.auto_started.connect(self._auto_step)
        self.cache.measure.connect(self.measure)
        self.row.loaded.connect(self._on_loaded)
        self.row.said.connect(self._said)
        self.set_step(0)

    @property
    def model(self):
        return self.run.state.model

    @property
    def generation(self):
        """The generation every step shows (the prompt and the tokens appended to it)."""
        return self.text.result

    @property
    def busy(self) -> bool:
        """A load, an add, a run, a decode step or a timing is running."""
        return self.row.busy or self.timing.running or self.run.task is not None or self.text.task is not None

    def _build_rows(self) -> None:
        self.prompt = bind(QLineEdit(DEFAULT_PROMPT), self.run, "prompt")
        prompt_row = QHBoxLayout()
        prompt_row.addWidget(QLabel("Prompt"))
        prompt_row.addWidget(self.prompt, 1)
        # Until a decoder is loaded the steps have nothing to draw; this banner says what to do.
        self.no_model = note(
            "No decoder loaded yet. Add SmolLM2-135M with the button above (once, 93 MB), or open a "
            "decoder you already have; every step then shows that model's numbers."
        )
        self.no_model.setStyleSheet("background: #fde9c8; color: #3a2a00; padding: 14px; font-size: 15px;")
        self.body.addWidget(self.row)
        self.body.addWidget(self.no_model)
        self.body.addLayout(prompt_row)

    # --- models -----------------------------------------------------------------------------
    def _said(self, text: str, level: str) -> None:
        """The row's messages; without a model, what to do (add SmolLM2, or what to install
        instead) stays in the message bar and the banner."""
        if self.model is None:
            self.offer = (text, level)
            blocked = smollm2.cannot_add()
            if blocked is not None:
                self.no_model.setText(f"No decoder loaded. {blocked}")
        self.show_message(text, level)

    def _on_run(self) -> None:
        """A new prefill: the text starts again from it, and so do step 2's draws."""
        self.text.apply(run=self.run.state, generation=self.run.result, token=None)
        self.streams.restart(self.sampling.state.seed)

    def _on_loaded(self, model) -> None:
        self.offer = None
        self.no_model.hide()
        self.clear_message()
        self.run.apply(model=model)

    # --- sampling and generation ------------------------------------------------------------
    def _snapshot(self):
        return None if self.generation is None else snapshot(self.generation, self.sampling.result)

    def draw_sample(self) -> None:
        snap = self._snapshot()
        if snap is not None:
            token, prob = self.streams.preview.draw(snap.dist)
            self.temperature.show_sample(visible(self.model.tokenizer.decode([token])), prob)

    def append_sample(self) -> None:
        snap = self._snapshot()
        if snap is not None and self._can_append():
            at = len(self.generation.chosen)  # the k-th generated token takes the seed's k-th number
            self._append(*self.streams.of(self.generation, self.sampling.state.seed).draw(snap.dist, at))

    def append_choice(self, index: int) -> None:
        snap = self._snapshot()
        if snap is not None and 0 <= index < len(snap.choices):
            self._append(snap.choices[index].id, snap.choices[index].prob)

    def _can_append(self) -> bool:
        """One step at a time: nothing runs now (a draw made now is not lost)."""
        return not self.busy and self.generation is not None

    def _append(self, token: int, prob: float) -> None:
        g = self.generation
        if not self._can_append():
            return  # one step at a time
        if g.length >= context_limit(g.model):
            self.generate.stop_auto()
            self.show_message(
                f"The context is full ({context_limit(g.model)} tokens); undo a step or shorten the prompt"
            )
            return
        self.text.apply(generation=g, token=(token, prob))

    def _on_text(self) -> None:
        """After a decode step: stop at the end-of-text token, or take the next step on Auto.
        Without a model the offer to add one stays in the message bar (a new text clears it)."""
        g = self.generation
        if g is None and self.offer is not None:
            self.show_message(*self.offer)
        if self.text.state.token is None or g is None:
            return  # a new run, or an undo
        if g.chosen[-1].id == g.model.tokenizer.eos_token_id:
            self.generate.stop_auto()
            self.show_message("The model chose its end-of-text token; undo it to go on.", "info")
        elif self.generate.auto:
            QTimer.singleShot(AUTO_DELAY_MS, self._auto_step)

    def _auto_step(self) -> None:
        if self.generate.auto and not self.busy:
            self.append_sample()

    def undo(self) -> None:
        g = self.generation
        if not self.busy and g is not None and g.undo() is not None:
            self.clear_message()
            self.text.apply(generation=g.undo(), token=None)

    def measure(self) -> None:
        g = self.generation
        if self.busy or g is None:
            return
        show = {"on_result": self.cache.show_timing, "on_error": self.show_message}
        self.timing.start(prediction.time_decode, g.model, g.ids, g.length, **show)

    # --- smoke, tests, export ---------------------------------------------------------------
    def exercise(self) -> None:
        worker.settle(300)
        if self.model is None:
            super().exercise()
            return

        def settle(action, *args):
            action(*args)
            worker.settle(120)

        for text in ("", "word " * 9000, "unbelievably 👍 日本語 שלום", DEFAULT_PROMPT):
            settle(self.prompt.setText, text)
        t = self.temperature
        settings = ((t.temperature, 0.05, 5.0, 0.7), (t.top_k, 1, 1000, 0), (t.top_p, 0.05, 0.9))
        for box, *values in settings:
            for value in values:
                box.setValue(value)
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

    def result_views(self, step: int) -> list:
        """The grouped-query step covers its grid with the hint under it (no model: no grid)."""
        return [self.groups.grid] if step == 4 else super().result_views(step)

    def export(self):
        return {
            "predictions": self.predictions.bars.plot,
            "sampling": self.temperature.bars.plot,
            "kv cache": self.cache.cache_map,
            "kv cache size": self.cache.size_plot,
            "shared heads": self.groups.grid.view,
        }
