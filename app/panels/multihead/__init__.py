"""Panel "Multi-head": h soft lookups in parallel subspaces, compared head by head, then joined.

One state for every step (``state.py``); the controls on the left change it, and each step shows
it its own way: the heads side by side, a per-head table, the join through W_O, and what heads learn.
"""

from __future__ import annotations

from dataclasses import asdict

from PySide6.QtWidgets import (
    QComboBox,
    QFormLayout,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from app.panels.base import Panel
from app.panels.binding import bind, set_quietly
from app.panels.multihead.join import JoinPage
from app.panels.multihead.learned import LearnedPage
from app.panels.multihead.side_by_side import HeadsPage
from app.panels.multihead.state import (
    MASKS,
    MAX_D_MODEL,
    MAX_HEADS,
    MAX_TOKENS,
    MultiHeadState,
    compute_multihead,
)
from app.panels.multihead.table import TablePage
from app.panels.step import Live
from app.widgets import LabelledSlider
from app.widgets.side_column import side_column
from app.widgets.spin_boxes import spin
from app.widgets.text import WrappingButton, note, scrolling
from core.maths.multihead import fitting_heads, head_divisors, parse_heads

REAL_MODEL_PANEL = "model"


class MultiHeadPanel(Panel):
    steps = ("Heads side by side", "Per-head table", "Joining the heads", "What heads learn")

    def __init__(self, parent=None):
        super().__init__(parent)
        self.live = Live(MultiHeadState(), compute_multihead)
        self.tokens_edit = bind(QLineEdit(self.live.state.text), self.live, "text")
        self.tokens_edit.setPlaceholderText("words separated by spaces")
        tokens = QFormLayout()  # across the panel: a long text must not widen the control column
        tokens.addRow("Tokens", self.tokens_edit)
        self.body.addLayout(tokens)
        row = QHBoxLayout()
        row.addWidget(self._controls())
        self.body.addLayout(row)
        self.side_by_side, self.table_page = HeadsPage(self.live), TablePage(self.live)
        self.join, self.learned = JoinPage(self.live), LearnedPage(self.live)
        self.add_steps(self.side_by_side, self.table_page, self.join, self.learned, into=row)
        self.live.changed.connect(self._show_heads_choice)
        self._show_heads_choice()
        self.set_step(0)

    def _controls(self) -> QWidget:
        """The settings every step shares but the tokens, in a column on the left."""
        s, live = self.live.state, self.live
        self.d_model_spin = spin(s.d_model, 1, MAX_D_MODEL, tracking=True)
        self.d_model_spin.valueChanged.connect(self._on_d_model)
        live.changed.connect(lambda: set_quietly(self.d_model_spin, live.state.d_model))
        self.heads_box = QComboBox()  # the divisors of d_model, or a typed count (checked)
        self.heads_box.setEditable(True)
        self.heads_box.setInsertPolicy(QComboBox.InsertPolicy.NoInsert)
        self.heads_box.setToolTip("Only divisors of d_model are offered; a typed value is checked.")
        self.heads_box.currentIndexChanged.connect(lambda _: self._on_heads_text())
        self.heads_box.lineEdit().editingFinished.connect(self._on_heads_text)
        self.d_k_label = QLabel()
        self.seed_spin = bind(spin(s.seed, 0, 2**31 - 1, tracking=True), live, "seed")
        self.scale_slider = bind(LabelledSlider("", 0.01, 10.0, s.scale, log=True, decimals=3), live, "scale")
        self.temperature_slider = bind(
            LabelledSlider("", 0.05, 20.0, s.temperature, log=True), live, "temperature"
        )
        self.mask_box = QComboBox()
        self.mask_box.addItems(list(MASKS))
        bind(self.mask_box, live, "mask")
        self.reset_button = QPushButton("Article example")
        self.reset_button.setToolTip("Seed 42, 8 tokens, d_model 32, 4 heads, weights × 0.1, T = 1, no mask")
        self.reset_button.clicked.connect(self.reset)
        form = QFormLayout()
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
        self.model_button = WrappingButton("See trained heads (real model)")
        self.model_button.clicked.connect(lambda: self.openPanel.emit(REAL_MODEL_PANEL))
        left = QVBoxLayout()
        left.addLayout(form)
        left.addSpacing(12)
        left.addWidget(scrolling(self.random_note, self.model_button), 1)  # the form keeps its room
        return side_column(left)

    @property
    def settings(self) -> MultiHeadState:
        return self.live.state

    @property
    def trace(self):
        return self.live.result.trace

    def _on_d_model(self, d_model: int) -> None:
        """A new d_model keeps the largest head count that still divides it, and says so."""
        heads = self.live.state.heads
        fitting = fitting_heads(d_model, heads, MAX_HEADS)
        if self.live.apply(d_model=d_model, heads=fitting) and fitting != heads:
            self.show_message(
                f"{heads} heads do not divide d_model = {d_model}, so the panel uses {fitting}.", "info"
            )

    def _on_heads_text(self) -> None:
        try:
            heads = parse_heads(self.heads_box.currentText(), self.live.state.d_model, MAX_HEADS)
        except ValueError as exc:
            self.show_message(str(exc))
            return
        if heads != self.live.state.heads:
            self.live.apply(heads=heads)

    def _show_heads_choice(self) -> None:
        """Offer the divisors of d_model and show the current count (quietly)."""
        s = self.live.state
        divisors = [str(h) for h in head_divisors(s.d_model, MAX_HEADS)]
        set_quietly(self.heads_box, str(s.heads), choices=divisors)
        self.d_k_label.setText(f"d_k = d_model / h = {s.d_model // s.heads}")

    def choose_heads(self, heads: int) -> None:
        """Pick ``heads`` from the offered divisors, as a click in the list would."""
        self.heads_box.setCurrentIndex(self.heads_box.findText(str(heads)))

    def select_head(self, i: int) -> None:
        """Enlarge head i in the heads views."""
        for page in (self.side_by_side, self.learned):
            page.select_head(i)

    def reset(self) -> None:
        """Back to the article's example."""
        self.live.apply(**asdict(MultiHeadState()))

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
