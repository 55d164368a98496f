"""Panel "Real model": what the heads of a trained model attend to, offline.

The model loads in the background the first time the panel is shown (torch is imported then, not
before). Every text change runs the model in the background; the newest text wins. Options (words,
hiding [CLS]/[SEP], the sentence-pair filter) re-express the last result through core.head_analysis
without running the model again.
"""

from __future__ import annotations

from collections import OrderedDict
from dataclasses import dataclass, replace
from functools import partial
from pathlib import Path

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QFileDialog,
    QFormLayout,
    QGroupBox,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QListWidget,
    QProgressBar,
    QPushButton,
    QSpinBox,
    QTabWidget,
    QVBoxLayout,
    QWidget,
)

from app import worker
from app.panels.base import Panel
from app.settings import settings
from app.widgets import Heatmap
from app.widgets.attention_lines import AttentionLines
from app.widgets.controls import note, side_column
from app.widgets.head_grid import HeadGrid
from core import smollm2
from core.head_analysis import (
    PAIR_PARTS,
    PATTERNS,
    HeadRanking,
    ModelAttention,
    express,
    find_head,
    find_pattern,
)

BUNDLED = "minilm"
BUNDLED_NAME = "all-MiniLM-L6-v2 (bundled)"
DEFAULT_TEXT = "The trophy didn't fit in the suitcase because it was too big."
DEFAULT_FROM, DEFAULT_TO = "it", "trophy"
MAX_RECENT = 8
KEEP_LOADED = 2  # models kept in memory, so switching back to one is instant
RANKING_ROWS = 10
ALL_PARTS = "all"

_loaded: OrderedDict[str, object] = OrderedDict()  # source -> LoadedModel, most recent last


@dataclass(frozen=True)
class Options:
    """How the last result is shown; changing these never re-runs the model."""

    words: bool = False
    hide_special: bool = False
    rescale: bool = True
    part: str = ALL_PARTS
    layer: int = 0  # 0-based here; the spin boxes show them from 1
    head: int = 0


class ModelPanel(Panel):
    key = "model"
    title = "Real model"
    steps = ("Tokens", "Head view", "Model view", "Find a head", "Patterns")

    def __init__(self, parent=None):
        super().__init__(parent)
        self.options = Options()
        self.model = None  # core.models.LoadedModel once loaded
        self.raw: ModelAttention | None = None  # what the model returned for the current text
        self.result: ModelAttention | None = None  # raw, re-expressed by the options
        self.ranking: HeadRanking | None = None  # the last "find a head" ranking
        self.find_pair: tuple[str, str] = (DEFAULT_FROM, DEFAULT_TO)
        self.load_task: worker.Task | None = None
        self.load_generation = 0
        self.fallback_note = ""  # why the bundled model was loaded instead of the last one
        self.run_task: worker.Task | None = None
        self.run_pending = False
        self._build()
        self.set_step(0)

    # --- layout -----------------------------------------------------------------------------
    def _build(self) -> None:
        self.model_combo = QComboBox()
        self.model_combo.setMinimumContentsLength(24)
        self.open_button = QPushButton("Open model folder…")
        self.progress = QProgressBar()
        self.progress.setMaximumWidth(160)
        self.cancel_button = QPushButton("Cancel")
        self.model_info = QLabel("The model loads when this panel is first shown.")
        for widget in (self.progress, self.cancel_button):
            widget.hide()
        model_row = QHBoxLayout()
        model_row.addWidget(QLabel("Model"))
        model_row.addWidget(self.model_combo)
        model_row.addWidget(self.open_button)
        model_row.addWidget(self.progress)
        model_row.addWidget(self.cancel_button)
        model_row.addWidget(self.model_info, 1)

        self.text_edit = QLineEdit(DEFAULT_TEXT)
        self.text_b_edit = QLineEdit()
        self.text_b_edit.setPlaceholderText("optional: a second sentence, read as a pair with [SEP]")
        texts = QFormLayout()
        texts.addRow("Sentence A", self.text_edit)
        texts.addRow("Sentence B", self.text_b_edit)

        self.words_box = QCheckBox("join pieces into words")
        self.special_box = QCheckBox("hide [CLS]/[SEP]")
        self.rescale_box = QCheckBox("rescale rows")
        self.rescale_box.setChecked(True)
        self.rescale_box.setEnabled(False)
        self.rescale_box.setToolTip("after hiding, divide each row by what is left so it sums to 1")
        self.part_combo = QComboBox()
        self.part_combo.addItems([ALL_PARTS, *PAIR_PARTS])
        self.part_combo.setEnabled(False)
        self.part_combo.setToolTip("with two sentences: keep only the weights from one into the other")
        self.layer_spin, self.head_spin = QSpinBox(), QSpinBox()
        for spin in (self.layer_spin, self.head_spin):
            spin.setRange(1, 1)
        options = QHBoxLayout()
        for widget in (self.words_box, self.special_box, self.rescale_box):
            options.addWidget(widget)
        options.addWidget(QLabel("Pair"))
        options.addWidget(self.part_combo)
        options.addStretch(1)
        options.addWidget(QLabel("Layer"))
        options.addWidget(self.layer_spin)
        options.addWidget(QLabel("Head"))
        options.addWidget(self.head_spin)

        self.lines = AttentionLines()
        self.grid = HeadGrid()
        self.heatmap = Heatmap("", signed=False)
        self.heatmap.set_describer(self._describe_cell)
        self.tabs = QTabWidget()
        self.tabs.addTab(self.lines, "Head view")
        self.tabs.addTab(self.grid, "Model view")
        self.tabs.addTab(self.heatmap, "Heatmap")

        self.from_combo, self.to_combo = QComboBox(), QComboBox()
        self.find_button = QPushButton("Find the head")
        self.find_label = note("Pick a token that looks and a token it looks at.")
        self.ranking_list = QListWidget()
        find_form = QFormLayout()
        find_form.addRow("From", self.from_combo)
        find_form.addRow("To", self.to_combo)
        find_box = QGroupBox("Find a head")
        find_layout = QVBoxLayout(find_box)
        find_layout.addLayout(find_form)
        find_layout.addWidget(self.find_button)
        find_layout.addWidget(self.find_label)
        find_layout.addWidget(self.ranking_list, 1)
        pattern_box = QGroupBox("Patterns: the head most like…")
        pattern_layout = QVBoxLayout(pattern_box)
        self.pattern_buttons: dict[str, QPushButton] = {}
        for key, (title, _) in PATTERNS.items():
            button = QPushButton(title)
            button.setStyleSheet("text-align: left; padding: 3px 6px;")
            button.clicked.connect(lambda _=False, k=key: self.show_pattern(k))
            pattern_layout.addWidget(button)
            self.pattern_buttons[key] = button
        self.pattern_label = note(" ")
        pattern_layout.addWidget(self.pattern_label)
        side = QVBoxLayout()
        side.addWidget(find_box, 1)
        side.addWidget(pattern_box)
        side_box = side_column(side)

        row = QHBoxLayout()
        row.addWidget(self.tabs, 1)
        row.addWidget(side_box)
        self.body.addLayout(model_row)
        self.body.addLayout(texts)
        self.body.addLayout(options)
        self.body.addLayout(row, 1)

        self._fill_model_combo()
        self.model_combo.activated.connect(lambda i: self.load(self.model_combo.itemData(i)))
        self.open_button.clicked.connect(self.choose_folder)
        self.cancel_button.clicked.connect(self.cancel_load)
        self.text_edit.textChanged.connect(self.request_run)
        self.text_b_edit.textChanged.connect(self.request_run)
        self.words_box.toggled.connect(lambda on: self._set_options(words=on))
        self.special_box.toggled.connect(self._on_hide_special)
        self.rescale_box.toggled.connect(lambda on: self._set_options(rescale=on))
        self.part_combo.currentTextChanged.connect(lambda part: self._set_options(part=part))
        self.layer_spin.valueChanged.connect(lambda v: self.select_head(v - 1, self.options.head))
        self.head_spin.valueChanged.connect(lambda v: self.select_head(self.options.layer, v - 1))
        self.grid.clicked.connect(self._open_tile)
        self.find_button.clicked.connect(self.find)
        self.ranking_list.currentRowChanged.connect(self._on_ranking_row)

    # --- loading ----------------------------------------------------------------------------
    def showEvent(self, event) -> None:
        super().showEvent(event)
        if self.model is None and self.load_task is None:
            last = str(settings().value("model/last", BUNDLED))
            added = last == smollm2.KEY and smollm2.installed_folder() is not None
            self.load(last if last == BUNDLED or added or Path(last).is_dir() else BUNDLED)

    def load(self, source: str) -> None:
        """Load ``source`` ("minilm" or a folder) in the background; the current model stays
        until the new one is ready."""
        from core import models

        self._stop_loading()
        self.load_generation += 1  # results of earlier loads are ignored from now on
        if source in _loaded:
            _loaded.move_to_end(source)
            self._on_loaded(_loaded[source])
            return
        self.progress.setRange(0, 0)
        self.progress.show()
        self.cancel_button.show()
        names = {BUNDLED: BUNDLED_NAME, smollm2.KEY: smollm2.NAME}
        self.model_info.setText(f"Loading {names.get(source) or Path(source).name}…")
        self.load_task = worker.run_task(
            models.load_model,
            source,
            on_result=partial(self._on_loaded, generation=self.load_generation),
            on_error=partial(self._on_load_error, source=source, generation=self.load_generation),
            on_progress=self._on_load_progress,
        )

    def _stop_loading(self) -> None:
        """Forget the load in progress, if any; a late result of it is ignored by its generation."""
        if self.load_task is not None:
            self.load_task.cancel()
            self.load_task = None
        self.progress.hide()
        self.cancel_button.hide()

    def cancel_load(self) -> None:
        if self.load_task is not None:
            self._stop_loading()
            self.load_generation += 1
            self._show_model_info()
            self.show_message("Loading was cancelled; the previous model stays.", "info")

    def _on_load_progress(self, done: int, total: int) -> None:
        self.progress.setRange(0, total)
        self.progress.setValue(done)

    def _on_load_error(self, message: str, source: str, generation: int) -> None:
        if generation != self.load_generation:
            return
        self._stop_loading()
        if self.model is None and source != BUNDLED:  # e.g. the last folder has gone: fall back
            self.fallback_note = f"{message} Showing the bundled model instead."
            self.load(BUNDLED)
            return
        self.show_message(message)
        self._show_model_info()
        self._fill_model_combo()

    def _on_loaded(self, model, generation: int | None = None) -> None:
        if generation is not None and generation != self.load_generation:
            return  # cancelled or replaced by a newer load
        self._stop_loading()
        _loaded[model.source] = model
        _loaded.move_to_end(model.source)
        while len(_loaded) > KEEP_LOADED:
            _loaded.popitem(last=False)
        self.model = model
        s = settings()
        s.setValue("model/last", model.source)
        if model.source not in (BUNDLED, smollm2.KEY):
            recent = [model.source, *[r for r in self._recent() if r != model.source]]
            s.setValue("model/recent", recent[:MAX_RECENT])
        self._fill_model_combo()
        self._show_model_info()
        self.layer_spin.setRange(1, model.n_layers)
        self.head_spin.setRange(1, model.n_heads)
        self.clear_message()
        self.raw = None
        self.request_run()

    def _show_model_info(self) -> None:
        m = self.model
        if m is None:
            self.model_info.setText("No model loaded.")
            return
        kind = "decoder: looks back only" if m.is_causal else "encoder: looks both ways"
        self.model_info.setText(
            f"{m.n_layers} layers × {m.n_heads} heads · {kind} · up to {m.max_tokens} tokens"
        )

    def _recent(self) -> list[str]:
        value = settings().value("model/recent", [])
        return [value] if isinstance(value, str) else list(value or [])

    def _fill_model_combo(self) -> None:
        combo = self.model_combo
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

    def choose_folder(self) -> None:
        """Ask for a local Hugging Face model folder and load it."""
        folder = QFileDialog.getExistingDirectory(self, "Open a Hugging Face model folder")
        if folder:
            self.load(folder)

    # --- running the model ------------------------------------------------------------------
    def request_run(self) -> None:
        """Run the model on the current texts; while a run is going, only the newest text waits."""
        if self.model is None:
            return
        if self.run_task is not None:
            self.run_pending = True
            return
        from core import models

        self.run_task = worker.run_task(
            models.run,
            self.model,
            self.text_edit.text(),
            self.text_b_edit.text(),
            on_result=partial(self._on_run, self.model),
            on_error=self._on_run_error,
        )

    def _run_done(self) -> None:
        """A run ends in exactly one result or error; then the newest waiting text runs."""
        self.run_task = None
        if self.run_pending:
            self.run_pending = False
            self.request_run()

    def _on_run_error(self, message: str) -> None:
        self._run_done()
        self.show_message(message)

    def _on_run(self, model, raw: ModelAttention) -> None:
        self._run_done()
        if model is not self.model:
            return  # the result of a model that has since been replaced
        self.raw = raw
        is_pair = raw.is_pair
        self.part_combo.setEnabled(is_pair)
        if not is_pair and self.options.part != ALL_PARTS:
            self.part_combo.setCurrentText(ALL_PARTS)  # re-derives through _set_options
        if not self._derive(self.options):
            return
        notes = [self.fallback_note] if self.fallback_note else []
        self.fallback_note = ""
        if raw.dropped:
            notes.append(
                f"The text is longer than this model reads: it was cut to {raw.shape[-1]} tokens "
                f"and the last {raw.dropped} tokens were dropped."
            )
        if notes:
            self.show_message(" ".join(notes), "warning")

    # --- options: re-express the last result, then update the views ---------------------------
    def _set_options(self, **change) -> None:
        self._derive(replace(self.options, **change))

    def _on_hide_special(self, on: bool) -> None:
        self.rescale_box.setEnabled(on)
        self._set_options(hide_special=on)

    def _derive(self, options: Options) -> bool:
        """Apply ``options`` to the raw result; on bad input keep what is shown. True if shown."""
        if self.raw is None:
            self.options = options
            return False
        try:
            r = express(self.raw, options.words, options.hide_special, options.rescale, options.part)
        except ValueError as exc:
            self.show_message(str(exc))
            return False
        self.options, self.result = options, r
        self.clear_message()
        self._refresh()
        return True

    def select_head(self, layer: int, head: int) -> None:
        """Show head (layer, head), 0-based, in every view."""
        if self.result is None:
            return
        n_layers, n_heads = self.result.shape[:2]
        layer, head = min(max(layer, 0), n_layers - 1), min(max(head, 0), n_heads - 1)
        layer_changed = layer != self.options.layer
        self.options = replace(self.options, layer=layer, head=head)
        for spin, value in ((self.layer_spin, layer), (self.head_spin, head)):
            spin.blockSignals(True)
            spin.setValue(value + 1)
            spin.blockSignals(False)
        r = self.result
        if layer_changed:
            self.lines.set_data(r.attentions[layer], r.labels)
        self.grid.select(layer, head)
        self.heatmap.set_title(f"layer {layer + 1}, head {head + 1}")
        self.heatmap.set_data(r.attentions[layer, head], r.labels, r.labels, levels=(0.0, 1.0))

    def _refresh(self) -> None:
        r = self.result
        n_layers, n_heads = r.shape[:2]
        layer = min(self.options.layer, n_layers - 1)
        head = min(self.options.head, n_heads - 1)
        self.options = replace(self.options, layer=layer, head=head)
        self.lines.set_data(r.attentions[layer], r.labels)
        self.grid.set_data(r.attentions)
        self.select_head(layer, head)
        self._fill_token_combos()
        self._update_patterns()
        if self.ranking is not None:
            self._rank(jump=False)

    def _fill_token_combos(self) -> None:
        labels = self.result.labels
        seen: dict[str, int] = {}
        items = []
        for label in labels:
            seen[label] = seen.get(label, 0) + 1
            items.append(label if seen[label] == 1 else f"{label} #{seen[label]}")
        for combo, wanted in zip((self.from_combo, self.to_combo), self.find_pair, strict=True):
            combo.blockSignals(True)
            combo.clear()
            combo.addItems(items)
            index = combo.findText(wanted)
            if index < 0:
                index = next((i for i, x in enumerate(items) if x.lower() == wanted.lower()), 0)
            combo.setCurrentIndex(index)
            combo.blockSignals(False)

    # --- find a head, patterns --------------------------------------------------------------
    def find(self) -> None:
        """Rank every head by the weight "from" puts on "to" and jump to the best."""
        if self.result is None:
            return
        self.find_pair = (self.from_combo.currentText(), self.to_combo.currentText())
        self._rank(jump=True)

    def _rank(self, jump: bool) -> None:
        i, j = self.from_combo.currentIndex(), self.to_combo.currentIndex()
        if i < 0 or j < 0:
            return
        self.ranking = find_head(self.result, i, j)
        best = self.ranking.best
        if best.score > 0:
            self.find_label.setText(
                f"{self.ranking.what}: the best head is {best.label}, weight {best.score:.2f}."
            )
        else:
            filtered = self.options.part != ALL_PARTS
            outside = f", or the pair lies outside the {self.options.part} filter" if filtered else ""
            self.find_label.setText(f"{self.ranking.what}: no head puts any weight there{outside}.")
        self.ranking_list.blockSignals(True)
        self.ranking_list.clear()
        self.ranking_list.addItems([str(s) for s in self.ranking.ranked(RANKING_ROWS)])
        self.ranking_list.blockSignals(False)
        if jump:
            self._jump(best.layer, best.head, self.heatmap)
            self.heatmap.mark(i, j)

    def _on_ranking_row(self, row: int) -> None:
        if self.ranking is not None and row >= 0:
            score = self.ranking.ranked(RANKING_ROWS)[row]
            self._jump(score.layer, score.head, self.heatmap)
            self.heatmap.mark(self.from_combo.currentIndex(), self.to_combo.currentIndex())

    def _update_patterns(self) -> None:
        for key, button in self.pattern_buttons.items():
            title = PATTERNS[key][0]
            try:
                best = find_pattern(self.result, key).best
            except ValueError as exc:
                button.setText(f"{title}\nnot in this text")
                button.setToolTip(str(exc))
                button.setEnabled(False)
                continue
            button.setText(f"{title}\n{best}")
            button.setToolTip("click to show this head")
            button.setEnabled(True)

    def show_pattern(self, key: str) -> None:
        """Jump to the head that scores highest on pattern ``key`` and draw its lines."""
        if self.result is None:
            return
        try:
            ranking = find_pattern(self.result, key)
        except ValueError as exc:
            self.show_message(str(exc))
            return
        best = ranking.best
        others = ", ".join(str(s) for s in ranking.ranked(4)[1:])
        label = self.pattern_label
        label.setText(f"{ranking.what}: {best}. Next: {others}.")
        label.setMinimumHeight(label.heightForWidth(label.width()))  # all its lines, not the first two
        self._jump(best.layer, best.head, self.lines)

    def _jump(self, layer: int, head: int, view: QWidget) -> None:
        self.select_head(layer, head)
        self.lines.set_visible_heads({head})
        self.tabs.setCurrentWidget(view)

    def _open_tile(self, layer: int, head: int) -> None:
        self._jump(layer, head, self.heatmap)

    def _describe_cell(self, i: int, j: int) -> str:
        o, r = self.options, self.result
        text = f"layer {o.layer + 1}, head {o.head + 1}"
        if o.words:
            text += " · words: sum into a word, mean out of it"
        if o.hide_special:
            text += " · share of what is left without [CLS]/[SEP]" if o.rescale else " · [CLS]/[SEP] hidden"
        if o.part != ALL_PARTS:
            src, dst = "AB".index(o.part[0]), "AB".index(o.part[-1])
            if not (r.segment[i] == src and r.segment[j] == dst):
                text += f" · outside the {o.part} filter, shown as 0"
        return text

    # --- lecture steps, smoke, export -------------------------------------------------------------
    def show_step(self, i: int) -> None:
        """Show the view the step talks about. The searches of steps 4 and 5 run from their
        buttons (Find the head, the pattern buttons), never from paging."""
        self.tabs.setCurrentWidget((self.heatmap, self.lines, self.grid, self.heatmap, self.lines)[i])

    def exercise(self) -> None:
        worker.wait_idle()

        def settle(action, *args):
            action(*args)
            worker.wait_idle()

        settle(self.text_edit.setText, "")
        settle(self.text_edit.setText, "word " * 2000)
        settle(self.text_edit.setText, "unbelievably 👍 日本語 שלום and the unbelievably long")
        for box in (self.words_box, self.special_box, self.rescale_box):
            box.setChecked(not box.isChecked())
        for key in PATTERNS:
            self.show_pattern(key)
        settle(self.text_b_edit.setText, "It was too big.")
        for part in (*PAIR_PARTS, ALL_PARTS):
            self.part_combo.setCurrentText(part)
        for box in (self.words_box, self.special_box, self.rescale_box):
            box.setChecked(not box.isChecked())
        settle(self.text_b_edit.setText, "")
        settle(self.load, str(Path(__file__).parent))  # not a model folder: refused
        settle(self.text_edit.setText, DEFAULT_TEXT)
        self.layer_spin.setValue(99)
        self.head_spin.setValue(0)
        self._open_tile(5, 11)
        self.lines.set_focus("left", 11)
        self.lines.set_focus(None)
        super().exercise()
        self.find()
        self.tabs.setCurrentWidget(self.lines)

    def export(self) -> dict[str, QWidget]:
        return {"head_view": self.lines, "model_view": self.grid, "heatmap": self.heatmap}
