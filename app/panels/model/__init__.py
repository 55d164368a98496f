"""Panel "Real model": what the heads of a trained model attend to, offline.

The model loads in the background the first time the panel is shown (torch is imported then, not
before), from core.models.loaded, shared with the other panels. Two live states (state.py): the
run (model and texts: every text change runs the model in the worker, the newest text wins) and
the view (join pieces into words, hide [CLS]/[SEP], the sentence-pair filter: re-expressed in the
worker without running the model again; the previous view stays until the new one is ready).
Every step walks through the same views (views.py); the searches of steps 4 and 5 run from their
buttons, except that step 4 opens once on the best head for its default pair (find_head.py).
"""

from __future__ import annotations

from pathlib import Path

from PySide6.QtWidgets import QFormLayout, QLineEdit

from app import worker
from app.panels.base import Panel
from app.panels.binding import bind
from app.panels.model import scripts
from app.panels.model.state import DEFAULT_TEXT, RunState, ViewState, compute_run, compute_view
from app.panels.model.views import AttentionPage
from app.panels.model_row import ModelRow
from app.panels.scripts import Script
from app.panels.step import Live
from core.maths.head_analysis import PAIR_PARTS, PATTERNS
from core.models import BUNDLED


class ModelPanel(Panel):
    steps = ("Tokens", "Head view", "Model view", "Find a head", "Patterns")

    def __init__(self, parent=None):
        super().__init__(parent)
        self.run = Live(RunState(), compute_run, background=True)
        self.view = Live(ViewState(), compute_view, background=True)
        self.loader = ModelRow(None, "model", default=BUNDLED, fallback=BUNDLED)
        self.text_edit = bind(QLineEdit(DEFAULT_TEXT), self.run, "text")
        self.text_b_edit = bind(QLineEdit(), self.run, "text_b")
        self.text_b_edit.setPlaceholderText("optional: a second sentence, read as a pair with [SEP]")
        texts = QFormLayout()
        texts.addRow("Sentence A", self.text_edit)
        texts.addRow("Sentence B", self.text_b_edit)
        self.body.addWidget(self.loader)
        self.body.addLayout(texts)
        self.page = AttentionPage(self.view)
        p = self.page
        self.add_steps(p, p, p, p, p)
        self.loader.loaded.connect(self._use_model)
        p.inside_button.clicked.connect(self.open_inside)
        self.loader.said.connect(self.show_message)
        self.run.failed.connect(self.show_message)
        self.run.changed.connect(lambda: self.run.result is not None and self.view.apply(raw=self.run.result))
        self.set_step(0)

    @property
    def model(self):
        """The loaded core.models.LoadedModel, None before the first load."""
        return self.loader.model

    @property
    def raw(self):
        """What the model returned for the texts shown (core.maths.head_analysis.ModelAttention)."""
        return self.view.state.raw

    @property
    def result(self):
        """The weights as shown: ``raw`` re-expressed by the options."""
        return None if self.view.result is None else self.view.result.attention

    @property
    def options(self) -> ViewState:
        return self.view.state

    def showEvent(self, event) -> None:
        super().showEvent(event)
        if self.model is None and not self.loader.busy:
            self.loader.load_last()

    def load(self, source: str) -> None:
        """Load ``source`` ("minilm", "smollm2" or a folder); the current model stays until then."""
        self.loader.load(source)

    def choose_folder(self) -> None:
        self.loader.choose_folder()

    def _use_model(self, model) -> None:
        self.clear_message()
        self.page.note, self.loader.fallback_note = self.loader.fallback_note, ""
        self.run.apply(model=model)

    def open_inside(self) -> None:
        """Open the head on screen in Inside a head, from the last token to the token it weights most."""
        raw = self.raw
        if self.model is None or raw is None:
            return
        layer, head = self.page.layer, self.page.head
        key = int(raw.attentions[layer, head, -1].argmax()) + 1 if not raw.is_pair else 1
        cell = {"layer": layer + 1, "head": head + 1, "query": 0, "key": key}
        self.openHead.emit({"source": self.model.source, "prompt": self.run.state.text, **cell})

    def find(self) -> None:
        self.page.finder.find()

    def select_head(self, layer: int, head: int) -> None:
        self.page.select_head(layer, head)

    def show_pattern(self, key: str) -> None:
        self.page.show_pattern(key)

    def show_step(self, i: int) -> None:
        """Show the view the step talks about; Find a head's first showing shows its best head."""
        super().show_step(i)
        p = self.page
        p.tabs.setCurrentWidget((p.heatmap, p.lines, p.grid, p.heatmap, p.lines)[i])
        p.finder.step_shown(self.steps[i] == "Find a head")

    def step_script(self, i: int) -> Script:
        """Every step shares the page: each exports the view it talks about, as the page shows it now."""
        p, run, view = self.page, self.run.state, self.options
        heads = sorted(p.lines.visible)
        if i == 0:
            return scripts.tokens(run, view, p.layer, p.head)
        if i == 1:
            return scripts.head_view(run, view, p.layer, heads)
        if i == 2:
            return scripts.model_view(run, view)
        if i == 3:
            pair = (p.finder.from_combo.currentIndex(), p.finder.to_combo.currentIndex())
            return scripts.find_head(run, view, p.layer, p.head, pair)
        return scripts.patterns(run, view, p.layer, heads)

    def exercise(self) -> None:
        worker.settle()

        def settle(action, *args):
            action(*args)
            worker.settle()

        p = self.page
        settle(self.text_edit.setText, "")
        settle(self.text_edit.setText, "word " * 2000)
        settle(self.text_edit.setText, "unbelievably 👍 日本語 שלום and the unbelievably long")
        for box in (p.words_box, p.special_box, p.rescale_box):
            settle(box.setChecked, not box.isChecked())
        for key in PATTERNS:
            self.show_pattern(key)
        settle(self.text_b_edit.setText, "It was too big.")
        for part in (*PAIR_PARTS, "all"):
            settle(p.part_combo.setCurrentText, part)
        for box in (p.words_box, p.special_box, p.rescale_box):
            box.setChecked(not box.isChecked())  # one after the other: only the last lands
        settle(self.text_b_edit.setText, "")
        settle(self.load, str(Path(__file__).parent))  # not a model folder: refused
        settle(self.text_edit.setText, DEFAULT_TEXT)
        p.layer_spin.setValue(99)
        p.head_spin.setValue(0)
        p.jump(5, 11, p.heatmap)
        p.lines.set_focus("left", 11)
        p.lines.set_focus(None)
        super().exercise()
        self.find()
        p.tabs.setCurrentWidget(p.lines)
