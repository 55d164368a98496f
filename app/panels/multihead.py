"""Panel "Multi-head": h soft lookups in parallel subspaces, compared head by head, then joined."""

from __future__ import annotations

from dataclasses import dataclass, replace
from functools import lru_cache

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QRectF, Qt
from PySide6.QtGui import QPen
from PySide6.QtWidgets import (
    QComboBox,
    QFormLayout,
    QGraphicsRectItem,
    QGridLayout,
    QHBoxLayout,
    QHeaderView,
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
from app.theme import style_plots
from app.widgets import Heatmap, LabelledSlider
from app.widgets.controls import note, side_column
from core import explain, inputs, masks
from core.multihead import (
    MultiHeadTrace,
    RandomWeights,
    attend_heads,
    head_table,
    project_heads,
    random_weights,
    split_cost,
)
from core.qkv import tokenize

MAX_HEADS = 16  # more heads than this do not fit on screen as separate heatmaps
MAX_TOKENS = 128
MAX_D_MODEL = 512
GRID_COLUMNS = 8
REAL_MODEL_PANEL = "model"

MASKS = {
    "none": lambda n: None,
    "causal": masks.causal,
    "sliding window of 3 (causal)": lambda n: masks.sliding_window(n, 3),
    "local ±1 + global first token": lambda n: masks.global_local(n, 2, [0]),
}
TABLE_COLUMNS = (  # two-line headers, so the table fits beside the controls on a projector
    "head",
    "mean peak\nposition",
    "mean entropy\n(nats)",
    "agreement\nwith head 0",
    "agreement\nwith uniform",
)


@dataclass(frozen=True)
class Settings:
    """The article's multi-head example: seed 42, 8 tokens, d_model 32, 4 heads, weights × 0.1."""

    text: str = "the trophy would not fit into my suitcase"
    d_model: int = 32
    heads: int = 4
    seed: int = 42
    scale: float = 0.1
    temperature: float = 1.0
    mask: str = "none"


@lru_cache(maxsize=2)
def _draws(tokens: tuple[str, ...], d_model: int, seed: int) -> RandomWeights:
    """The random draws depend only on these three settings; a new head count regroups them."""
    return random_weights(np.random.default_rng(seed), tokens, d_model)


@lru_cache(maxsize=4)
def _projections(tokens: tuple[str, ...], d_model: int, seed: int, heads: int, scale: float):
    """(queries, keys, values) and W_O; a temperature or mask change reuses them."""
    draws = _draws(tokens, d_model, seed)
    W_Q, W_K, W_V, W_O = draws.split(heads, scale)
    return project_heads(draws.X, W_Q, W_K, W_V), W_O


def head_divisors(d_model: int) -> list[int]:
    """Head counts that split d_model evenly and fit on screen."""
    return [h for h in range(1, min(d_model, MAX_HEADS) + 1) if d_model % h == 0]


def head_color(i: int, heads: int):
    return pg.intColor(i, hues=max(heads, 1), sat=200)


class MultiHeadPanel(Panel):
    key = "multihead"
    title = "Multi-head"
    steps = ("Heads side by side", "Per-head table", "Joining the heads", "What heads learn")

    CAPTIONS = (
        "Every head runs its own soft lookup over the same tokens, in its own d_k-dimensional space. "
        "All heads share one colour scale, so colours compare across heads. Click a head to enlarge "
        "it and see its queries and keys.",
        "The per-head statistics: where each head looks on average, how spread its rows are, and how "
        "much its weights overlap with head 0's and with evenly spread weights.",
        "Each head hands back an n × d_k block. The blocks are laid side by side, head 0 first, and "
        "W_O mixes them back into the model's d_model features.",
        "These weights are random, so the heads differ only by chance and have learned nothing. "
        "Trained heads specialise: previous-token heads, heads that gather on separators, heads that "
        "link a pronoun to its noun. The real-model panel shows them.",
    )
    STEP_PAGE = (0, 1, 2, 0)

    def __init__(self, parent=None):
        super().__init__(parent)
        self.settings = Settings()
        self.selected = 0
        self.grid_maps: list[Heatmap] = []
        self.grid_heads = 0
        self.titled: tuple[int, int] | None = None
        self.concat_blocks: list[QGraphicsRectItem] = []
        self.w_o_blocks: list[QGraphicsRectItem] = []
        self._build()
        self._apply()
        self.set_step(0)

    # --- layout -----------------------------------------------------------------------------
    def _build(self) -> None:
        s = self.settings
        self.tokens_edit = QLineEdit(s.text)
        self.tokens_edit.setPlaceholderText("words separated by spaces")
        self.d_model_spin = QSpinBox()
        self.d_model_spin.setRange(1, MAX_D_MODEL)
        self.d_model_spin.setValue(s.d_model)
        self.heads_box = QComboBox()
        self.heads_box.setEditable(True)
        self.heads_box.setInsertPolicy(QComboBox.InsertPolicy.NoInsert)
        self.heads_box.setToolTip("Only divisors of d_model are offered; a typed value is checked.")
        self.d_k_label = QLabel()
        self.seed_spin = QSpinBox()
        self.seed_spin.setRange(0, 2**31 - 1)
        self.seed_spin.setValue(s.seed)
        self.scale_slider = LabelledSlider("", 0.01, 10.0, s.scale, log=True, decimals=3)
        self.temperature_slider = LabelledSlider("", 0.05, 20.0, s.temperature, log=True)
        self.mask_box = QComboBox()
        self.mask_box.addItems(list(MASKS))
        self.reset_button = QPushButton("Article example")
        self.reset_button.setToolTip("Seed 42, 8 tokens, d_model 32, 4 heads, weights × 0.1, T = 1, no mask")
        form = QFormLayout()
        form.addRow("Tokens", self.tokens_edit)
        form.addRow("d_model", self.d_model_spin)
        form.addRow("Heads h", self.heads_box)
        form.addRow("", self.d_k_label)
        form.addRow("Seed", self.seed_spin)
        form.addRow("Weight scale", self.scale_slider)
        form.addRow("Temperature", self.temperature_slider)
        form.addRow("Mask", self.mask_box)
        form.addRow(self.reset_button)
        self.random_note = note(
            "Random weights: no head here has learned anything, so their patterns carry no meaning."
        )
        self.model_button = QPushButton("See trained heads (real model)")
        self.model_button.clicked.connect(lambda: self.openPanel.emit(REAL_MODEL_PANEL))
        left = QVBoxLayout()
        left.addLayout(form)
        left.addSpacing(12)
        left.addWidget(self.random_note)
        left.addWidget(self.model_button)
        left.addStretch(1)
        left_box = side_column(left)

        self.caption = note()
        self.pages = QStackedWidget()
        self.pages.addWidget(self._heads_page())
        self.pages.addWidget(self._table_page())
        self.pages.addWidget(self._join_page())
        right = QVBoxLayout()
        right.addWidget(self.caption)
        right.addWidget(self.pages, 1)
        row = QHBoxLayout()
        row.addWidget(left_box)
        row.addLayout(right, 1)
        self.body.addLayout(row)

        self.tokens_edit.textChanged.connect(lambda text: self._apply(text=text))
        self.d_model_spin.valueChanged.connect(self._on_d_model)
        self.heads_box.currentIndexChanged.connect(lambda _: self._on_heads_text())
        self.heads_box.lineEdit().editingFinished.connect(self._on_heads_text)
        self.seed_spin.valueChanged.connect(lambda v: self._apply(seed=v))
        self.scale_slider.valueChanged.connect(lambda v: self._apply(scale=v))
        self.temperature_slider.valueChanged.connect(lambda v: self._apply(temperature=v))
        self.mask_box.currentTextChanged.connect(lambda name: self._apply(mask=name))
        self.reset_button.clicked.connect(self.reset)

    def _heads_page(self) -> QWidget:
        self.grid = QGridLayout()
        self.grid.setSpacing(4)
        self.grid.setContentsMargins(0, 0, 0, 0)
        grid_box = QWidget()
        grid_box.setLayout(self.grid)
        grid_box.setMinimumHeight(200)
        self.detail_map = Heatmap("")
        self.detail_map.set_describer(lambda i, j: explain.weight(self.trace.heads[self.selected], i, j))
        self.q_map = Heatmap("Q", signed=True, colorbar=False, cell_text=False)
        self.k_map = Heatmap("K", signed=True, colorbar=False, cell_text=False)
        qk = QVBoxLayout()
        qk.addWidget(self.q_map)
        qk.addWidget(self.k_map)
        detail = QHBoxLayout()
        detail.addWidget(self.detail_map, 2)
        detail.addLayout(qk, 1)
        page = QWidget()
        layout = QVBoxLayout(page)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(grid_box, 2)
        layout.addLayout(detail, 3)
        return page

    def _table_page(self) -> QWidget:
        self.table = QTableWidget(0, len(TABLE_COLUMNS))
        self.table.setHorizontalHeaderLabels(list(TABLE_COLUMNS))
        self.table.verticalHeader().hide()
        self.table.setEditTriggers(QTableWidget.EditTrigger.NoEditTriggers)
        self.table.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
        self.table_note = note()
        page = QWidget()
        layout = QVBoxLayout(page)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.table, 1)
        layout.addWidget(self.table_note)
        return page

    def _join_page(self) -> QWidget:
        self.shapes_label = note()
        self.concat_map = Heatmap("concat", signed=True, colorbar=False, cell_text=False)
        self.w_o_map = Heatmap("W_O", signed=True, colorbar=False, cell_text=False)
        self.output_map = Heatmap("output", signed=True, colorbar=False, cell_text=False)
        self.concat_map.set_describer(self._describe_concat)
        self.output_map.set_describer(self._describe_output)
        # The product laid out as it is worked by hand: W_O above the result, concat to its left,
        # so each output cell lines up with the row of concat and the column of W_O that make it.
        product = QGridLayout()
        product.addWidget(self.w_o_map, 0, 1)
        product.addWidget(self.concat_map, 1, 0)
        product.addWidget(self.output_map, 1, 1)
        product.setRowStretch(0, 3)
        product.setRowStretch(1, 2)
        self.legend = note()
        self.cost_note = note()
        notes = QVBoxLayout()
        for label in (self.shapes_label, self.legend, self.cost_note):
            notes.addWidget(label)
        notes.addStretch(1)
        product.addLayout(notes, 0, 0)
        page = QWidget()
        layout = QVBoxLayout(page)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addLayout(product, 1)
        return page

    def _grid_map(self, i: int) -> Heatmap:
        """The grid's heatmap for head i, built the first time that many heads are shown."""
        while len(self.grid_maps) <= i:
            k = len(self.grid_maps)
            heatmap = Heatmap(f"head {k}", colorbar=False, cell_text=False, labels=False)
            heatmap.set_describer(lambda r, c, k=k: explain.weight(self.trace.heads[k], r, c))
            heatmap.clicked.connect(lambda _r, _c, k=k: self.select_head(k))
            style_plots(heatmap)
            self.grid_maps.append(heatmap)
        return self.grid_maps[i]

    @staticmethod
    def _block(heatmap: Heatmap, blocks: list[QGraphicsRectItem], i: int) -> QGraphicsRectItem:
        while len(blocks) <= i:
            item = QGraphicsRectItem()
            item.setZValue(8)
            heatmap.plot.addItem(item)
            blocks.append(item)
        return blocks[i]

    # --- state changes ----------------------------------------------------------------------
    def _on_d_model(self, d_model: int) -> None:
        heads = self.settings.heads
        fitting = max(h for h in head_divisors(d_model) if h <= heads)
        if self._apply(d_model=d_model, heads=fitting) and fitting != heads:
            self.show_message(
                f"{heads} heads do not divide d_model = {d_model}, so the panel uses {fitting}.", "info"
            )

    def _on_heads_text(self) -> None:
        try:
            heads = inputs.whole(self.heads_box.currentText(), "Heads", 1, MAX_HEADS)
        except ValueError as exc:
            self.show_message(str(exc))
            return
        d_model = self.settings.d_model
        if d_model % heads:
            offered = ", ".join(map(str, head_divisors(d_model)))
            self.show_message(f"{heads} heads do not divide d_model = {d_model}; choose one of {offered}.")
        elif heads != self.settings.heads:
            self._apply(heads=heads)

    def choose_heads(self, heads: int) -> None:
        """Pick ``heads`` from the offered divisors, as a click in the list would."""
        self.heads_box.setCurrentIndex(self.heads_box.findText(str(heads)))

    def select_head(self, i: int) -> None:
        """Enlarge head i and show its queries and keys."""
        self.selected = min(max(int(i), 0), self.settings.heads - 1)
        self._show_selected()

    def reset(self) -> None:
        """Back to the article's example."""
        self._apply(**vars(Settings()))

    def _apply(self, **change) -> bool:
        """Validate the changed settings, recompute once in core, update the views; False if refused."""
        candidate = replace(self.settings, **change)
        try:
            tokens = tokenize(candidate.text, MAX_TOKENS)
            n = len(tokens)
            c = candidate
            projections, W_O = _projections(tuple(tokens), c.d_model, c.seed, c.heads, c.scale)
            trace = attend_heads(*projections, W_O, mask=MASKS[c.mask](n), temperature=c.temperature)
            table = head_table(trace)
        except ValueError as exc:
            self.show_message(str(exc))
            return False
        self.settings, self.tokens, self.W_O = candidate, tokens, W_O
        self.trace: MultiHeadTrace = trace
        self.clear_message()
        self._sync_controls()
        self.selected = min(self.selected, candidate.heads - 1)
        self._show_heads()
        self._show_table(table)
        self._show_join()
        return True

    def _sync_controls(self) -> None:
        """Make every control show the current settings, without triggering another recompute."""
        s = self.settings
        divisors = head_divisors(s.d_model)
        self.heads_box.blockSignals(True)
        if [self.heads_box.itemText(k) for k in range(self.heads_box.count())] != list(map(str, divisors)):
            self.heads_box.clear()
            self.heads_box.addItems([str(h) for h in divisors])
        self.heads_box.setCurrentIndex(divisors.index(s.heads))
        self.heads_box.blockSignals(False)
        for widget, value in (
            (self.tokens_edit, s.text),
            (self.d_model_spin, s.d_model),
            (self.seed_spin, s.seed),
            (self.scale_slider, s.scale),
            (self.temperature_slider, s.temperature),
            (self.mask_box, s.mask),
        ):
            widget.blockSignals(True)
            if isinstance(widget, QLineEdit):
                if widget.text() != value:
                    widget.setText(value)
            elif isinstance(widget, QComboBox):
                widget.setCurrentText(value)
            elif widget.value() != value:
                widget.setValue(value)
            widget.blockSignals(False)
        self.d_k_label.setText(f"d_k = d_model / h = {s.d_model // s.heads}")

    # --- views --------------------------------------------------------------------------------
    def shared_levels(self) -> tuple[float, float]:
        """One colour scale for every head: 0 up to the largest weight of any head."""
        top = float(self.trace.weights.max())
        return 0.0, top if top > 0 else 1.0

    def _show_heads(self) -> None:
        h, tokens, levels = self.settings.heads, self.tokens, self.shared_levels()
        for i, head in enumerate(self.trace.heads):
            self._grid_map(i).set_data(head.weights, tokens, tokens, levels=levels)
        if self.grid_heads != h:  # lay the grid out again only when the head count changes
            columns = min(h, GRID_COLUMNS)
            for i, heatmap in enumerate(self.grid_maps):
                if i < h:
                    self.grid.addWidget(heatmap, i // columns, i % columns)
                heatmap.setVisible(i < h)
            self.grid_heads = h
        self._show_selected()

    def _show_selected(self) -> None:
        i, h, tokens = self.selected, self.settings.heads, self.tokens
        if self.titled != (i, h):  # titles are rich text, slow to lay out: only when they change
            for k, heatmap in enumerate(self.grid_maps[:h]):
                color = head_color(k, h).name()
                name = f"head {k}" if h <= GRID_COLUMNS else str(k)
                name = f"<b>{name}</b>" if k == i else name
                heatmap.set_title(f"<span style='color:{color}'>■</span> {name}")
            self.titled = (i, h)
        d_k = self.trace.queries.shape[-1]
        self.detail_map.set_title(f"Head {i}, enlarged")
        self.detail_map.set_data(self.trace.heads[i].weights, tokens, tokens, levels=self.shared_levels())
        dims = [str(k) for k in range(d_k)]
        q_k_levels = _symmetric(self.trace.queries[i], self.trace.keys[i])
        self.q_map.set_title(f"Q = X·W_Q[{i}]  ({len(tokens)} × {d_k})")
        self.q_map.set_data(self.trace.queries[i], tokens, dims, levels=q_k_levels)
        self.k_map.set_title(f"K = X·W_K[{i}]  ({len(tokens)} × {d_k})")
        self.k_map.set_data(self.trace.keys[i], tokens, dims, levels=q_k_levels)

    def _show_table(self, table) -> None:
        h = self.settings.heads
        columns = (table.mean_peak, table.mean_entropy, table.agreement_head0, table.agreement_uniform)
        self.table.setRowCount(h)
        for i in range(h):
            cells = [f"head {i}"] + [f"{c[i]:.4f}" if k else f"{c[i]:.3f}" for k, c in enumerate(columns)]
            for j, text in enumerate(cells):
                item = self.table.item(i, j)
                if item is None:
                    item = QTableWidgetItem()
                    item.setTextAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
                    self.table.setItem(i, j, item)
                item.setText(text)
            self.table.item(i, 0).setForeground(head_color(i, h))
        n = len(self.tokens)
        self.table_note.setText(
            f"Mean entropy can reach at most ln({n}) = {np.log(n):.4f} (weights spread evenly over every "
            "key). Head 0's agreement with itself measures how concentrated it is; between different "
            "heads, compare the agreement with the uniform column, the level two unrelated heads reach."
        )

    def _show_join(self) -> None:
        s, t, tokens = self.settings, self.trace, self.tokens
        n, h, d_model = len(tokens), s.heads, s.d_model
        d_k = d_model // h
        features = [str(k) for k in range(d_model)]
        self.concat_map.set_data(t.concat, tokens, features)
        if self.w_o_map.values is not self.W_O:  # unchanged by the temperature and the mask
            self.w_o_map.set_data(self.W_O, features, features)
        self.output_map.set_data(t.output, tokens, features)
        self.concat_map.set_title(f"concat  ({n} × {h}·{d_k} = {n} × {d_model})")
        self.w_o_map.set_title(f"W_O  ({d_model} × {d_model})")
        self.output_map.set_title(f"output  ({n} × {d_model})")
        self.shapes_label.setText(
            f"{h} head output{'s' if h > 1 else ''} of {n} × {d_k}, side by side → concat {n} × {d_model}; "
            f"concat · W_O ({d_model} × {d_model}) → output {n} × {d_model}, the same shape as X. "
            "Blue is negative, red positive; hover a cell for its value."
        )
        legend = []
        for i in range(max(h, len(self.concat_blocks))):
            shown = i < h
            color = head_color(i, h)
            for heatmap, blocks, rect in (
                (self.concat_map, self.concat_blocks, QRectF(i * d_k, 0, d_k, n)),
                (self.w_o_map, self.w_o_blocks, QRectF(0, i * d_k, d_model, d_k)),
            ):
                item = self._block(heatmap, blocks, i)
                item.setVisible(shown)
                if shown:
                    pen = QPen(color, 3)
                    pen.setCosmetic(True)
                    item.setPen(pen)
                    item.setRect(rect)
            if shown:
                swatch = f"<span style='color:{color.name()}'>■ head {i}</span>"
                legend.append(f"{swatch}: columns {i * d_k}–{(i + 1) * d_k - 1}")
        self.legend.setText(
            "Blocks of concat, and the rows of W_O that read them: " + ", ".join(legend) + "."
        )
        one, split = split_cost(n, d_model, 1), split_cost(n, d_model, h)
        self.cost_note.setText(
            f"Work at n = {n}: 1 head of width {d_model} needs {one.flops['total']:,} FLOPs of matrix "
            f"products; {h} heads of width {d_k} need {split.flops['total']:,}. Splitting reshapes the "
            f"work without adding to it. Only the softmax runs per head: {one.exponentials:,} "
            f"exponentials for one head, {split.exponentials:,} for {h}."
        )

    # --- hover explanations -------------------------------------------------------------------
    def _describe_concat(self, i: int, j: int) -> str:
        d_k = self.settings.d_model // self.settings.heads
        head, k = divmod(j, d_k)
        return f"output of head {head}, feature {k}, for “{self.tokens[i]}”"

    def _describe_output(self, i: int, j: int) -> str:
        return f"concat[{self.tokens[i]}] · W_O[:, {j}] = " + explain.dot_terms(
            self.trace.concat[i], self.W_O[:, j], digits=3
        )

    # --- lecture steps, smoke, export -------------------------------------------------------------
    def show_step(self, i: int) -> None:
        self.pages.setCurrentIndex(self.STEP_PAGE[i])
        self.caption.setText(self.CAPTIONS[i])

    def exercise(self) -> None:
        self.tokens_edit.setText("")
        self.tokens_edit.setText(" ".join(["x"] * (MAX_TOKENS + 1)))
        self.tokens_edit.setText(" ".join(f"w{k}" for k in range(MAX_TOKENS)))
        self.d_model_spin.setValue(MAX_D_MODEL)
        self.choose_heads(8)
        self.heads_box.setEditText("5")
        self.heads_box.lineEdit().editingFinished.emit()
        self.heads_box.setEditText("many")
        self.heads_box.lineEdit().editingFinished.emit()
        self.d_model_spin.setValue(1)
        self.d_model_spin.setValue(48)
        self.choose_heads(16)
        for name in MASKS:
            self.mask_box.setCurrentText(name)
        self.temperature_slider.setValue(0.05)
        self.scale_slider.setValue(10.0)
        self.seed_spin.setValue(3)
        self.select_head(15)
        self.reset()
        super().exercise()
        self.set_step(0)
        self.select_head(1)

    def export(self) -> dict[str, QWidget]:
        views: dict[str, QWidget] = {
            f"head {i}": m for i, m in enumerate(self.grid_maps[: self.settings.heads])
        }
        views.update({"enlarged head": self.detail_map, "table": self.table, "concat": self.concat_map})
        views.update({"W_O": self.w_o_map, "output": self.output_map})
        return views


def _symmetric(*matrices: np.ndarray) -> tuple[float, float]:
    """One colour range around 0 for several signed matrices, so their colours compare."""
    top = max(float(np.abs(m).max()) for m in matrices)
    return (-top, top) if top > 0 else (-1.0, 1.0)
