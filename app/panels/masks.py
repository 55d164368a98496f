"""Panel "Masks and variants": which keys each query may see, what that does to the weights and
to the cost, −∞ against a finite additive mask, cross-attention, and why training needs a mask."""

from __future__ import annotations

from dataclasses import dataclass, field, replace

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QAbstractItemView,
    QCheckBox,
    QComboBox,
    QFormLayout,
    QGridLayout,
    QLabel,
    QLineEdit,
    QPushButton,
    QSpinBox,
    QStackedWidget,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from app.panels.base import Panel
from app.widgets import Heatmap, LabelledSlider
from app.widgets.colors import default_levels
from app.widgets.controls import note
from core import explain, inputs, masks
from core.attention import AttentionTrace, attend
from core.qkv import MAX_TOKENS, Example, random_example, tokenize

D_MODEL, D_K = 8, 4
FILLS = (-np.inf, -1e9, -10.0)
FILL_NAMES = ("−∞", "−1e9", "−10")
KIND_NAMES = {
    "none": "None (bidirectional)",
    "causal": "Causal",
    "sliding_window": "Sliding window",
    "global_local": "Global + local",
    "custom": "Custom (click the mask)",
}
FAMILIES = {
    "none": "No mask: every token reads the whole text, both ways, as in BERT-style encoders.",
    "causal": "Causal: a token reads itself and earlier tokens only, as in GPT, Llama and Mistral.",
    "sliding_window": (
        "Sliding window: only nearby tokens; Mistral 7B v0.1 used a causal window of 4,096. "
        "Cost grows like n·w."
    ),
    "global_local": "Global + local: a window plus a few tokens linked to all (Longformer, BigBird).",
    "custom": "Custom: any pattern of allowed cells; click the mask to draw one.",
}
PADDING_NOTE = "Padding hides the filler keys of a batch from every query, in encoders and decoders."
CROSS_NOTE = (
    "Rows from one text, columns from another: a T5 decoder reading its encoded source, or "
    "Stable Diffusion's image layers reading the encoded prompt."
)


@dataclass(frozen=True)
class Settings:
    text: str = "the cat sat on the mat [PAD] [PAD]"
    spec: masks.MaskSpec = field(default_factory=lambda: masks.MaskSpec("causal", n_pad=2))
    seed: int = 0
    queries: str = "die Katze sitzt"
    keys: str = "the cat sits on the mat"
    copy_causal: bool = False


@dataclass(frozen=True)
class Result:
    """Everything the panel shows, computed in one go from the settings."""

    example: Example
    mask: np.ndarray  # (n, n) bool
    trace: AttentionTrace
    cost: masks.MaskCost
    leak: np.ndarray  # (n,)
    empty: np.ndarray  # indices of rows that see nothing
    additive: tuple[masks.AdditiveOutcome, ...]
    copy: AttentionTrace
    cross: AttentionTrace
    cross_tokens: tuple[list[str], list[str]]


def compute(s: Settings) -> Result:
    """One recompute in core for settings ``s``; ValueError on bad input."""
    tokens = tokenize(s.text)
    example = random_example(tokens, D_MODEL, D_K, s.seed)
    n = len(tokens)
    mask = masks.build(s.spec, n)
    Q, K, V = example.projections()
    trace = attend(Q, K, V, mask=mask)
    additive = tuple(masks.additive_outcome(trace.scaled, mask, f) for f in FILLS)
    real = max(n - s.spec.n_pad, 1)  # padding is not trained on: copy among real tokens only
    copy_mask = masks.causal(real) if s.copy_causal else None
    copy = attend(Q[:real], K[:real], V[:real], mask=copy_mask)
    q_tokens, kv_tokens = tokenize(s.queries), tokenize(s.keys)
    # one embedding table and one set of projections for both sequences: a shared layer
    both = random_example(q_tokens + kv_tokens, D_MODEL, D_K, s.seed)
    bq, bk, bv = both.projections()
    m = len(q_tokens)
    cross = attend(bq[:m], bk[m:], bv[m:])
    return Result(
        example,
        mask,
        trace,
        masks.cost(mask),
        masks.leaked_weight(trace.weights, mask),
        masks.empty_rows(mask),
        additive,
        copy,
        cross,
        (q_tokens, kv_tokens),
    )


def leak_text(v: float) -> str:
    """A leaked weight as a readable number; exact zeros say so."""
    if v == 0:
        return "0 (exact)"
    return f"{v:.3g}".replace("-", "−")


def _table(columns: list[str]) -> QTableWidget:
    table = QTableWidget(0, len(columns))
    table.setHorizontalHeaderLabels(columns)
    table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
    table.setSelectionMode(QAbstractItemView.SelectionMode.NoSelection)
    table.horizontalHeader().setStretchLastSection(True)
    return table


def _fill_table(table: QTableWidget, rows: list[str], cells: list[list[str]]) -> None:
    """Write texts into ``table``, reusing its items."""
    if table.rowCount() != len(rows):
        table.setRowCount(len(rows))
    if table.property("rows") != rows:
        table.setVerticalHeaderLabels(rows)
        table.setProperty("rows", rows)
    for i, row in enumerate(cells):
        for j, text in enumerate(row):
            item = table.item(i, j)
            if item is None:
                item = QTableWidgetItem()
                item.setTextAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
                table.setItem(i, j, item)
            if item.text() != text:
                item.setText(text)


class MasksPanel(Panel):
    key = "masks"
    title = "Masks and variants"
    steps = ("Kinds of mask", "Additive masks", "Cross-attention", "Copying the answer")

    def __init__(self, parent=None):
        super().__init__(parent)
        self.settings = Settings()
        self.result = compute(self.settings)
        self.stale: set[int] = set()
        self._build()
        self._show()
        self.set_step(0)

    # --- layout -----------------------------------------------------------------------------
    def _build(self) -> None:
        s = self.settings
        self.tokens_edit = QLineEdit(s.text)
        self.tokens_edit.setPlaceholderText("words separated by spaces")
        self.kind_combo = QComboBox()
        for kind in masks.KINDS:
            self.kind_combo.addItem(KIND_NAMES[kind], kind)
        self.kind_combo.setCurrentIndex(masks.KINDS.index(s.spec.kind))
        self.window_slider = LabelledSlider("Window", 1, MAX_TOKENS, s.spec.window, integer=True)
        self.symmetric_box = QCheckBox("Both sides (symmetric)")
        self.symmetric_box.setChecked(s.spec.symmetric)
        self.global_edit = QLineEdit(", ".join(map(str, s.spec.global_idx)))
        self.global_edit.setPlaceholderText("positions, e.g. 0, 5")
        self.pad_spin = QSpinBox()
        self.pad_spin.setRange(0, MAX_TOKENS)
        self.pad_spin.setValue(s.spec.n_pad)
        self.pad_spin.setSuffix(" trailing tokens")
        self.seed_spin = QSpinBox()
        self.seed_spin.setRange(0, 2**31 - 1)
        self.reset_button = QPushButton("Reset")
        self.family_note = note()
        self.window_slider.setMinimumWidth(220)
        controls = QGridLayout()
        placed = (  # three short rows, so the panel fits a 1280-pixel projector beside the lesson
            (QLabel("Tokens"), 0, 0, 1),
            (self.tokens_edit, 0, 1, 4),
            (QLabel("Seed"), 0, 5, 1),
            (self.seed_spin, 0, 6, 1),
            (self.reset_button, 0, 7, 1),
            (QLabel("Mask"), 1, 0, 1),
            (self.kind_combo, 1, 1, 1),
            (self.window_slider, 1, 2, 2),
            (self.symmetric_box, 1, 4, 3),
            (QLabel("Padding"), 2, 0, 1),
            (self.pad_spin, 2, 1, 1),
            (QLabel("Global"), 2, 2, 1),
            (self.global_edit, 2, 3, 4),
        )
        for widget, row, column, span in placed:
            controls.addWidget(widget, row, column, 1, span)
        controls.setColumnStretch(3, 1)
        self.body.addLayout(controls)
        self.body.addWidget(self.family_note)

        self.pages = QStackedWidget()
        self.pages.addWidget(self._kinds_page())
        self.pages.addWidget(self._additive_page())
        self.pages.addWidget(self._cross_page())
        self.pages.addWidget(self._copy_page())
        self.body.addWidget(self.pages, 1)

        self.tokens_edit.textChanged.connect(lambda t: self._change(text=t))
        self.kind_combo.currentIndexChanged.connect(
            lambda _i: self._change_spec(kind=self.kind_combo.currentData())
        )
        self.window_slider.valueChanged.connect(lambda v: self._change_spec(window=int(v)))
        self.symmetric_box.toggled.connect(lambda on: self._change_spec(symmetric=on))
        self.global_edit.textChanged.connect(self._on_globals)
        self.pad_spin.valueChanged.connect(lambda v: self._change_spec(n_pad=v))
        self.seed_spin.valueChanged.connect(lambda v: self._change(seed=v))
        self.reset_button.clicked.connect(self.reset)
        self.mask_map.clicked.connect(self.toggle_cell)

    def _kinds_page(self) -> QWidget:
        self.mask_map = Heatmap("Mask: bright = may attend", colorbar=False, cell_text=False)
        self.mask_map.set_describer(self._describe_mask)
        self.score_map = Heatmap("Scaled scores, hidden = −∞", signed=True)
        self.score_map.set_describer(self._describe_score)
        self.weight_map = Heatmap("Weights")
        self.weight_map.set_describer(lambda i, j: explain.weight(self.result.trace, i, j))
        self.cost_note = note()
        self.row_table = _table(["keys computed", "weight on hidden keys"])
        grid = QGridLayout()
        grid.addWidget(self.mask_map, 0, 0)
        grid.addWidget(self.score_map, 0, 1)
        grid.addWidget(self.weight_map, 1, 0)
        side = QVBoxLayout()
        side.addWidget(self.cost_note)
        side.addWidget(self.row_table, 1)
        grid.addLayout(side, 1, 1)
        return self._page(
            "Choose a mask above, or click cells of the mask to switch them. Hidden cells get "
            "the score −∞, so their weight is exactly 0 and each row's weights still add up to 1.",
            grid,
        )

    def _additive_page(self) -> QWidget:
        self.add_maps = [Heatmap(f"Weights, hidden cells + ({name})") for name in FILL_NAMES]
        for k, heatmap in enumerate(self.add_maps):
            heatmap.set_describer(lambda i, j, k=k: self._describe_additive(k, i, j))
        self.add_table = _table([f"leak, {name}" for name in FILL_NAMES])
        self.empty_note = note()
        self.empty_button = QPushButton("Hide every key from the first query")
        self.empty_button.clicked.connect(self.hide_first_row)
        grid = QGridLayout()
        for k, heatmap in enumerate(self.add_maps):
            grid.addWidget(heatmap, k // 2, k % 2)
        side = QVBoxLayout()
        side.addWidget(self.empty_note)
        side.addWidget(self.empty_button)
        side.addWidget(self.add_table, 1)
        grid.addLayout(side, 1, 1)
        return self._page(
            "The same mask added to the scores as a number: −∞, a large constant (−1e9) and a small "
            "one (−10). The table gives, per query, the weight that reaches hidden keys.",
            grid,
        )

    def _cross_page(self) -> QWidget:
        s = self.settings
        self.queries_edit = QLineEdit(s.queries)
        self.keys_edit = QLineEdit(s.keys)
        self.queries_edit.textChanged.connect(lambda t: self._change(queries=t))
        self.keys_edit.textChanged.connect(lambda t: self._change(keys=t))
        form = QFormLayout()
        form.addRow("Queries from (decoder)", self.queries_edit)
        form.addRow("Keys and values from (encoder)", self.keys_edit)
        self.cross_map = Heatmap("Cross-attention weights")
        self.cross_map.set_describer(lambda i, j: explain.weight(self.result.cross, i, j))
        self.cross_note = note()
        layout = QVBoxLayout()
        layout.addLayout(form)
        layout.addWidget(self.cross_note)
        layout.addWidget(self.cross_map, 1)
        return self._page(
            f"{CROSS_NOTE} One sequence asks (Q), the other answers (K and V), through the same "
            "projections. The weights are a rectangle: one row per query token, one column per key "
            "token. The weights are random, so the pattern carries no meaning here.",
            layout,
        )

    def _copy_page(self) -> QWidget:
        self.copy_box = QCheckBox("Causal mask on")
        self.copy_box.toggled.connect(lambda on: self._change(copy_causal=on))
        self.copy_map = Heatmap("Weights during training")
        self.copy_map.set_describer(lambda i, j: explain.weight(self.result.copy, i, j))
        self.copy_plot = pg.PlotWidget(title="Weight each token puts on the next one")
        self.copy_plot.setMouseEnabled(x=False, y=False)
        self.copy_plot.setMenuEnabled(False)
        self.copy_plot.hideButtons()
        self.copy_plot.setYRange(0, 1, padding=0.02)
        self.copy_plot.setLabel("left", "weight on the next token")
        self.copy_bars = pg.BarGraphItem(x=[0], height=[0], width=0.6, brush="#d9822b")
        self.copy_plot.addItem(self.copy_bars)
        self.copy_note = note()
        grid = QGridLayout()
        grid.addWidget(self.copy_box, 0, 0)
        grid.addWidget(self.copy_note, 0, 1)
        grid.addWidget(self.copy_map, 1, 0)
        grid.addWidget(self.copy_plot, 1, 1)
        grid.setRowStretch(1, 1)
        return self._page(
            "In training every real (not padding) position predicts the token after it, all at "
            "once. Unmasked, that token can be read directly: the bars give each position's "
            "weight on it, the cell just right of the diagonal (the largest is outlined).",
            grid,
        )

    @staticmethod
    def _page(text: str, content) -> QWidget:
        page = QWidget()
        layout = QVBoxLayout(page)
        layout.addWidget(note(text))
        if isinstance(content, QWidget):
            layout.addWidget(content, 1)
        else:
            layout.addLayout(content, 1)
        return page

    # --- state changes ----------------------------------------------------------------------
    def _change(self, **change) -> None:
        self._apply(replace(self.settings, **change))

    def _change_spec(self, **change) -> None:
        self._change(spec=replace(self.settings.spec, **change))

    def _on_globals(self, text: str) -> None:
        try:
            positions = inputs.positions(text, "Global positions", MAX_TOKENS - 1)
        except ValueError as exc:
            self.show_message(str(exc))
            return
        self._change_spec(global_idx=positions)

    def _apply(self, candidate: Settings) -> None:
        """Recompute for ``candidate``; on bad input keep the previous state and say why."""
        candidate = self._fit_custom(candidate)
        try:
            result = compute(candidate)
        except ValueError as exc:
            self.show_message(str(exc))
            return
        self.settings, self.result = candidate, result
        self._show()

    def _fit_custom(self, s: Settings) -> Settings:
        """Give a custom mask a grid of the right size, starting from the current mask's pattern."""
        try:
            n = len(tokenize(s.text))
        except ValueError:
            return s  # compute() reports it
        spec = s.spec
        if spec.kind != "custom" or (spec.custom is not None and spec.custom.shape == (n, n)):
            return s
        old = self._current_grid()
        grid = masks.causal(n)
        k = min(n, old.shape[0])
        grid[:k, :k] = old[:k, :k]
        return replace(s, spec=replace(spec, custom=grid))

    def _current_grid(self) -> np.ndarray:
        """A copy of the current mask before padding: where a custom mask starts from."""
        spec = self.settings.spec
        return masks.build(replace(spec, n_pad=0), self.result.mask.shape[0]).copy()

    def toggle_cell(self, i: int, j: int) -> None:
        """Switch cell (i, j) of the mask; the mask becomes custom, starting from the current one."""
        grid = self._current_grid()
        grid[i, j] = not grid[i, j]
        self._set_custom(grid)

    def hide_first_row(self) -> None:
        """Make a custom mask whose first query may attend to nothing: the fully masked row."""
        grid = self._current_grid()
        grid[0] = False
        self._set_custom(grid)

    def _set_custom(self, grid: np.ndarray) -> None:
        self._change_spec(kind="custom", custom=grid)
        self._sync_controls()

    def reset(self) -> None:
        """Back to the opening example: causal mask with two padding tokens, seed 0."""
        self._apply(Settings())
        self._sync_controls()

    def _sync_controls(self) -> None:
        """Show the current settings in the controls without triggering recomputes."""
        s = self.settings
        values = (
            (self.tokens_edit, s.text),
            (self.kind_combo, masks.KINDS.index(s.spec.kind)),
            (self.window_slider, s.spec.window),
            (self.symmetric_box, s.spec.symmetric),
            (self.global_edit, ", ".join(map(str, s.spec.global_idx))),
            (self.pad_spin, s.spec.n_pad),
            (self.seed_spin, s.seed),
            (self.queries_edit, s.queries),
            (self.keys_edit, s.keys),
            (self.copy_box, s.copy_causal),
        )
        for widget, value in values:
            widget.blockSignals(True)
            if isinstance(widget, QLineEdit):
                if widget.text() != value:
                    widget.setText(value)
            elif isinstance(widget, QComboBox):
                widget.setCurrentIndex(value)
            elif isinstance(widget, QCheckBox):
                widget.setChecked(value)
            else:
                widget.setValue(value)
            widget.blockSignals(False)

    # --- update the existing views ------------------------------------------------------------
    def _show(self) -> None:
        """After a recompute: the controls and the message now, the visible step's views now and
        the other steps' views when they are shown."""
        r, s = self.result, self.settings
        windowed = s.spec.kind in ("sliding_window", "global_local")
        self.window_slider.setEnabled(windowed)
        self.symmetric_box.setEnabled(windowed)
        self.global_edit.setEnabled(s.spec.kind == "global_local")
        notes = [FAMILIES[s.spec.kind]] + ([PADDING_NOTE] if s.spec.n_pad else [])
        self.family_note.setText(" ".join(notes))
        if r.empty.size:
            names = ", ".join(f"“{r.example.tokens[i]}”" for i in r.empty)
            self.show_message(
                f"Query row(s) {names} may attend to nothing: every key is hidden. Their weights "
                "and outputs are zeros, not NaN (see the Additive masks step for why).",
                "warning",
            )
        else:
            self.clear_message()
        self.stale = set(range(len(self.steps)))
        self._refresh(self.step)

    def _refresh(self, step: int) -> None:
        if step in self.stale:
            self.stale.discard(step)
            (self._show_kinds, self._show_additive, self._show_cross, self._show_copy)[step]()

    def _show_kinds(self) -> None:
        r, tokens, keys = self.result, self.result.example.tokens, self._key_labels()
        n = len(tokens)
        self.mask_map.set_data(r.mask.astype(float), tokens, keys, levels=(0.0, 1.0))
        # colours from every score, hidden or not: a cell keeps its colour when the mask changes
        self.score_map.set_data(r.trace.masked, tokens, keys, default_levels(r.trace.scaled, signed=True))
        self.weight_map.set_data(r.trace.weights, tokens, keys, levels=(0.0, 1.0))
        c = r.cost
        self.cost_note.setText(
            f"Computed cells: {c.computed} of {c.total} = {n}² ({100 * c.fraction:.1f} %). "
            f"A kernel that skips hidden cells saves {100 * c.saving:.1f} %. "
            f"Weight on hidden keys: {self._leak_summary(r.leak)}."
        )
        _fill_table(
            self.row_table,
            tokens,
            [[f"{k} of {n}", leak_text(v)] for k, v in zip(c.per_row, r.leak, strict=True)],
        )

    def _show_additive(self) -> None:
        r, tokens, keys = self.result, self.result.example.tokens, self._key_labels()
        for heatmap, outcome in zip(self.add_maps, r.additive, strict=True):
            heatmap.set_data(outcome.weights, tokens, keys, levels=(0.0, 1.0))
        _fill_table(
            self.add_table,
            tokens,
            [[leak_text(o.leak[i]) for o in r.additive] for i in range(len(tokens))],
        )
        self.empty_note.setText(self._empty_row_text())

    def _show_cross(self) -> None:
        r = self.result
        q_tokens, kv_tokens = r.cross_tokens
        self.cross_map.set_data(r.cross.weights, q_tokens, kv_tokens, levels=(0.0, 1.0))
        n_q, n_k = r.cross.weights.shape
        sums = " ".join(explain.num(v) for v in r.cross.weights.sum(axis=1))
        self.cross_note.setText(
            f"Q {n_q}×{D_K} from the decoder, K and V {n_k}×{D_K} from the encoder → weights "
            f"{n_q}×{n_k}, output {n_q}×{D_K}. Row sums: {sums}."
        )

    def _show_copy(self) -> None:
        r = self.result
        n = r.copy.weights.shape[0]
        tokens = r.example.tokens[:n]
        self.copy_map.set_data(r.copy.weights, tokens, tokens, levels=(0.0, 1.0))
        if n < 2:
            self.copy_bars.setOpts(x=[], height=[])
            self.copy_note.setText("Needs two tokens that are not padding: one predicts the other.")
            self.copy_map.mark(None)
            return
        weights = masks.next_token_weight(r.copy.weights)
        self.copy_bars.setOpts(x=np.arange(n - 1), height=weights)
        stride = max(1, int(np.ceil((n - 1) / 12)))
        ticks = [(i, tokens[i]) for i in range(0, n - 1, stride)]
        self.copy_plot.getAxis("bottom").setTicks([ticks])
        self.copy_plot.setXRange(-0.6, n - 1.4, padding=0)
        top = int(np.argmax(weights))
        self.copy_map.mark(top, top + 1)
        state = "on: the answer is hidden" if self.settings.copy_causal else "off"
        self.copy_note.setText(
            f"Causal mask {state}. Mean weight on the answer: {explain.num(weights.mean(), 3)}; "
            f"largest: {explain.num(weights[top], 3)} (“{tokens[top]}” → “{tokens[top + 1]}”, "
            "outlined)."
        )

    def _key_labels(self) -> list[str]:
        tokens, n_pad = self.result.example.tokens, self.settings.spec.n_pad
        n = len(tokens)
        return [f"{t}·pad" if k >= n - n_pad and "PAD" not in t else t for k, t in enumerate(tokens)]

    @staticmethod
    def _leak_summary(leak: np.ndarray) -> str:
        if np.all(leak == 0):
            return "exactly 0 in every row"
        return f"up to {leak_text(float(leak.max()))}"

    def _empty_row_text(self) -> str:
        r, tokens = self.result, self.result.example.tokens
        if not r.empty.size:
            return (
                "No query has every key hidden. Press the button to hide all keys from the first "
                "query and compare the three choices on that row."
            )
        i = int(r.empty[0])
        big = r.additive[1]
        return (
            f"Query “{tokens[i]}” may attend to nothing. Textbook softmax with −∞: the row's "
            "largest value is −∞, and −∞ − (−∞) is not a number, so the whole row turns NaN. "
            "This app's softmax notices the empty row and gives zeros (the −∞ map). With −1e9 "
            "every cell shifts by the same amount, the shift cancels, and the row reads the hidden "
            f"keys as if unmasked: leak {leak_text(big.leak[i])}."
        )

    # --- hover texts --------------------------------------------------------------------------
    def _describe_mask(self, i: int, j: int) -> str:
        spec, n = self.settings.spec, self.result.mask.shape[0]
        if self.result.mask[i, j]:
            return "may attend: this score is computed"
        if j >= n - spec.n_pad:
            return "hidden: a padding key"
        if spec.kind == "custom":
            return "hidden: switched off (click to switch on)"
        if j > i and (spec.kind == "causal" or not spec.symmetric):
            return "hidden: a later token (the future)"
        return "hidden: outside the window"

    def _describe_score(self, i: int, j: int) -> str:
        if not self.result.mask[i, j]:
            return "hidden by the mask, so the score is set to −∞ before the softmax"
        return explain.scaled(self.result.trace, i, j)

    def _describe_additive(self, k: int, i: int, j: int) -> str:
        o = self.result.additive[k]
        hidden = "" if self.result.mask[i, j] else f" (hidden: score {FILL_NAMES[k]} added)"
        return f"logit {explain.num(o.logits[i, j], 3)}{hidden}; row leak {leak_text(o.leak[i])}"

    # --- lecture steps, smoke, export -------------------------------------------------------------
    def show_step(self, i: int) -> None:
        self._refresh(i)
        self.pages.setCurrentIndex(i)

    def exercise(self) -> None:
        self.tokens_edit.setText("")
        self.tokens_edit.setText(" ".join(["tok"] * 500))
        self.tokens_edit.setText(" ".join(f"w{i}" for i in range(64)))
        for kind in masks.KINDS:
            self.kind_combo.setCurrentIndex(masks.KINDS.index(kind))
        self.kind_combo.setCurrentIndex(masks.KINDS.index("sliding_window"))
        for window in (1, 8, 64):
            self.window_slider.setValue(window)
        self.symmetric_box.setChecked(True)
        self.global_edit.setText("zero")
        self.global_edit.setText("0, 63")
        self.kind_combo.setCurrentIndex(masks.KINDS.index("global_local"))
        self.tokens_edit.setText("a b c")  # window 64 > 3 tokens: refused with a message
        self.pad_spin.setValue(64)
        self.reset()
        self.pad_spin.setValue(8)  # every token is padding: a warning, zero weights
        self.pad_spin.setValue(2)
        self.toggle_cell(2, 0)
        self.hide_first_row()
        self.queries_edit.setText("")
        self.keys_edit.setText("a b c d e f g h")
        self.copy_box.setChecked(True)
        self.copy_box.setChecked(False)
        self.seed_spin.setValue(3)
        self.reset()
        super().exercise()
        self.set_step(0)

    def export(self) -> dict[str, QWidget]:
        views = {"mask": self.mask_map, "scores": self.score_map, "weights": self.weight_map}
        views |= {f"additive {name}": m for name, m in zip(FILL_NAMES, self.add_maps, strict=True)}
        return views | {"cross-attention": self.cross_map, "copying": self.copy_map}
