"""Panel "Memory": attention as one step of a modern Hopfield network, next to the classical one.

The settings on the left are one state (``state.py``) shared by every step: the retrieval
(steps 1–3 share one page), β, capacity, and the article's experiment, which a button loads;
paging through the steps changes no setting.
"""

from __future__ import annotations

import numpy as np
from PySide6.QtWidgets import QComboBox, QFormLayout, QHBoxLayout, QLineEdit, QPushButton, QWidget

from app import worker
from app.panels.base import Panel
from app.panels.binding import bind, set_quietly
from app.panels.memory.article import ArticlePage
from app.panels.memory.beta import BetaPage
from app.panels.memory.capacity import CapacityPage
from app.panels.memory.retrieve import RetrievePage
from app.panels.memory.scripts import RETRIEVAL_PICTURES, retrieval
from app.panels.memory.state import ARTICLE_NOTE, SOURCES, MemoryState, N, compute_memory
from app.panels.scripts import Script
from app.panels.step import Live
from app.widgets import LabelledSlider
from app.widgets.side_column import side_column
from app.widgets.spin_boxes import spin
from app.widgets.text import WrappingButton
from core import inputs
from core.maths.explain import num
from core.maths.hopfield import BETA_RANGE, digit_glyphs


class MemoryPanel(Panel):
    steps = (
        "Store and corrupt",
        "Classical: sign updates",
        "Modern: one attention step",
        "β is an inverse temperature",
        "Capacity",
        "The article's experiment",
    )

    def __init__(self, parent=None):
        super().__init__(parent)
        self.live = Live(MemoryState(), compute_memory)
        row = QHBoxLayout()
        row.addWidget(self._controls())
        self.body.addLayout(row)
        self.retrieve, self.beta, self.capacity = (
            RetrievePage(self.live),
            BetaPage(self.live),
            CapacityPage(self.live),
        )
        self.article = ArticlePage(self.live)
        r = self.retrieve
        self.add_steps(r, r, r, self.beta, self.capacity, self.article, into=row)
        self.live.changed.connect(self._show_settings)
        self._show_settings()
        self.set_step(0)

    def _controls(self) -> QWidget:
        s, live = self.live.state, self.live
        self.source_box = QComboBox()
        for key, text in SOURCES.items():
            self.source_box.addItem(text, key)
        self.source_box.currentIndexChanged.connect(self._on_source)
        self.stored_spin = bind(spin(s.stored, 0, 400, tracking=True), live, "stored")
        self.target_spin = bind(spin(s.target, 0, 399, tracking=True), live, "target")
        self.flips_spin = bind(spin(s.flips, 0, 999, tracking=True), live, "flips")
        self.noise_slider = bind(LabelledSlider("Noise σ", 0.0, 1.5, s.noise), live, "noise")
        self.beta_slider = bind(LabelledSlider("β", 1e-3, 1e2, s.beta, log=True, decimals=3), live, "beta")
        self.beta_edit = QLineEdit(num(s.beta, 3))
        self.beta_edit.setToolTip("Type any β > 0 and press Enter")
        self.beta_edit.returnPressed.connect(self._on_beta_text)
        self.attention_button = QPushButton("1/√64")
        self.attention_button.setToolTip("β = 1/√d: plain scaled dot-product attention (T = 1)")
        self.attention_button.clicked.connect(lambda: self.set_beta(1 / np.sqrt(N)))
        self.seed_spin = bind(spin(s.seed, 0, 2**31 - 1, tracking=True), live, "seed")
        self.article_button = WrappingButton("Article experiment")
        self.article_button.setToolTip(ARTICLE_NOTE)
        self.article_button.clicked.connect(self.load_article)
        beta_row = QHBoxLayout()
        beta_row.addWidget(self.beta_edit, 1)
        beta_row.addWidget(self.attention_button)
        form = QFormLayout()
        form.addRow("Patterns", self.source_box)
        form.addRow("Stored", self.stored_spin)
        form.addRow("Query pattern #", self.target_spin)
        form.addRow("Flipped pixels", self.flips_spin)
        form.addRow(self.noise_slider)
        form.addRow(self.beta_slider)
        form.addRow("Exact β", beta_row)
        form.addRow("Seed", self.seed_spin)
        form.addRow(self.article_button)
        return side_column(form)

    @property
    def settings(self) -> MemoryState:
        return self.live.state

    @property
    def comparison(self):
        return self.live.result.comparison

    def _on_source(self, index: int) -> None:
        source, stored = self.source_box.itemData(index), self.live.wanted.stored
        if source == "digits":  # the ten digits hold at most ten patterns
            stored = min(stored, len(digit_glyphs()))
        self.live.apply(source=source, stored=stored)

    def _on_beta_text(self) -> None:
        try:
            self.set_beta(inputs.real(self.beta_edit.text(), "β", *BETA_RANGE))
        except ValueError as exc:
            self.show_message(str(exc))

    def set_beta(self, beta: float) -> None:
        """Use β exactly (the slider follows as far as its range goes)."""
        self.live.apply(beta=beta)

    def load_article(self) -> None:
        """Copy the second article's experiment (seed 0, β = 1, its draws) into the settings."""
        self.article.load()

    def _show_settings(self) -> None:
        """What the bindings do not cover: the source, the exact β, and which controls apply."""
        s = self.live.state
        set_quietly(self.source_box, s.source)
        self.beta_edit.setText(f"{s.beta:.4g}")
        for widget in (self.stored_spin, self.target_spin, self.flips_spin, self.noise_slider):
            widget.setEnabled(s.source != "article")

    def step_script(self, i: int) -> Script:
        """Steps 1–3 share one page: each script prints all of it and draws its step's part."""
        if self.step_pages[i] is self.retrieve:
            return retrieval(self.settings, RETRIEVAL_PICTURES[i])
        return super().step_script(i)

    def exercise(self) -> None:
        self.stored_spin.setValue(0)
        self.stored_spin.setValue(4)
        self.flips_spin.setValue(100)
        self.flips_spin.setValue(8)
        self.stored_spin.setValue(11)
        self.stored_spin.setValue(5)
        for text in ("0", "-1", "1e9", "abc", "0.125"):
            self.beta_edit.setText(text)
            self._on_beta_text()
        self.source_box.setCurrentIndex(1)
        self.stored_spin.setValue(200)
        self.target_spin.setValue(199)
        self.noise_slider.setValue(1.5)
        self.seed_spin.setValue(3)
        self.beta_slider.setValue(1e-3)
        self.beta_slider.setValue(1e2)
        super().exercise()
        self.attention_button.click()
        self.capacity.trials_spin.setValue(0)  # refused: at least one trial
        self.capacity.trials_spin.setValue(2)
        self.set_step(4)  # shown, it sweeps
        worker.settle()
        self.source_box.setCurrentIndex(0)
        self.stored_spin.setValue(5)
        self.target_spin.setValue(3)
        self.set_beta(1.0)
        self.set_step(0)
