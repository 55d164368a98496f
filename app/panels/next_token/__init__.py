"""Panel "Next token": a real decoder language model (SmolLM2-135M) one token at a time:
predictions, temperature / top-k / top-p, generation, the KV cache, grouped-query attention.

Every step draws the one text of ``Writing`` (writing.py) and calls it to grow: the run, the text,
the sampling settings and Auto. The shared model row loads or adds the model.
"""

from __future__ import annotations

from PySide6.QtWidgets import QHBoxLayout, QLabel, QLineEdit

from app import worker
from app.panels.binding import bind
from app.panels.model_row import ModelRow
from app.panels.next_token.generate import GeneratePage
from app.panels.next_token.gqa import GroupsPage
from app.panels.next_token.kv_cache import CachePage
from app.panels.next_token.predictions import PredictionsPage
from app.panels.next_token.state import DEFAULT_PROMPT
from app.panels.next_token.temperature import TemperaturePage
from app.panels.next_token.writing import Writing
from app.panels.row_panel import RowPanel
from app.widgets.text import note
from core.models import DECODER, smollm2

SMOLLM2 = smollm2.KEY


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
        self.writing = w = Writing()
        self.row = ModelRow(DECODER, "next_token", default=SMOLLM2, fallback=SMOLLM2)
        self._build_rows()
        self.predictions, self.temperature = PredictionsPage(w), TemperaturePage(w)
        self.generate, self.cache, self.groups = GeneratePage(w), CachePage(w), GroupsPage(w)
        self.add_steps(self.predictions, self.temperature, self.generate, self.cache, self.groups)
        self.offer: tuple[str, str] | None = None  # why there is no model and what to do
        w.run.failed.connect(self.show_message)
        w.text.changed.connect(self._offer_again)
        self.temperature.scale_button.clicked.connect(lambda: self.openPanel.emit("scale"))
        self.row.loaded.connect(self._on_loaded)
        self.row.said.connect(self._said)
        self.set_step(0)

    @property
    def model(self):
        return self.writing.model

    @property
    def busy(self) -> bool:
        """A load, an add, a run, a decode step or a timing is running."""
        return self.row.busy or self.writing.busy

    def reread(self) -> None:
        self.writing.run.apply()  # the prompt's run: the text grows from it again

    def _build_rows(self) -> None:
        self.prompt = bind(QLineEdit(DEFAULT_PROMPT), self.writing.run, "prompt")
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

    def _said(self, text: str, level: str) -> None:
        """The row's messages; without a model, what to do (add SmolLM2, or what to install
        instead) stays in the message bar and the banner."""
        if self.model is None:
            self.offer = (text, level)
            blocked = smollm2.cannot_add()
            if blocked is not None:
                self.no_model.setText(f"No decoder loaded. {blocked}")
        self.show_message(text, level)

    def _offer_again(self) -> None:
        """Without a model the offer to add one stays in the message bar (a new text clears it)."""
        if self.writing.generation is None and self.offer is not None:
            self.show_message(*self.offer)

    def _on_loaded(self, model) -> None:
        self.offer = None
        self.no_model.hide()
        self.clear_message()
        self.writing.run.apply(model=model)

    # --- smoke, tests, export ---------------------------------------------------------------
    def exercise(self) -> None:
        worker.settle(300)
        if self.model is None:
            super().exercise()
            return

        def settle(action, *args):
            action(*args)
            worker.settle(120)

        w = self.writing

        for text in ("", "word " * 9000, "unbelievably 👍 日本語 שלום", DEFAULT_PROMPT):
            settle(self.prompt.setText, text)
        t = self.temperature
        settings = ((t.temperature, 0.05, 5.0, 0.7), (t.top_k, 1, 1000, 0), (t.top_p, 0.05, 0.9))
        for box, *values in settings:
            for value in values:
                box.setValue(value)
        t.draw_button.click()
        for _ in range(3):
            settle(w.append_sample)
        settle(w.append_choice, 0)
        w.undo()
        settle(self.cache.measure_button.click)
        self.groups.layer_spin.setValue(self.model.n_layers)
        self.groups.layer_spin.setValue(1)
        super().exercise()
        for text in ("", DEFAULT_PROMPT):  # the prompt alone again, as a student starts
            settle(self.prompt.setText, text)
        self.set_step(1)
