"""Step 2: temperature, top-k and top-p reshape the distribution live (no model run); a seeded draw."""

from __future__ import annotations

from PySide6.QtCore import Signal
from PySide6.QtWidgets import QFormLayout, QHBoxLayout, QPushButton, QSpinBox, QVBoxLayout, QWidget

from app.panels.next_token.view import Snapshot
from app.widgets import LabelledSlider
from app.widgets.controls import note
from app.widgets.token_bars import TokenBars
from core.sampling import Settings

MAX_TOP_K = 1000


class SamplingPage(QWidget):
    """Emits ``changed(Settings)`` when a slider moves and ``draw()`` when a sample is asked for."""

    changed = Signal(object)
    draw = Signal()
    open_scale = Signal()

    def __init__(self):
        super().__init__()
        self.temperature = LabelledSlider("Temperature", 0.05, 5.0, 1.0, log=True)
        self.top_p = LabelledSlider("top-p", 0.05, 1.0, 1.0)
        self.top_k = QSpinBox()
        self.top_k.setRange(0, MAX_TOP_K)
        self.top_k.setSpecialValueText("off")
        self.seed = QSpinBox()
        self.seed.setRange(0, 9999)
        self.draw_button = QPushButton("Draw a token")
        self.scale_button = QPushButton("Open the Scale panel")
        self.summary = note()
        self.sample_label = note()
        form = QFormLayout()
        form.addRow(self.temperature)
        form.addRow("top-k", self.top_k)
        form.addRow(self.top_p)
        form.addRow("Seed", self.seed)
        left = QVBoxLayout()
        left.addWidget(
            note(
                "Dividing the logits by a temperature before the softmax is the same step the Scale "
                "panel applies to attention scores: below 1 the peak sharpens, above 1 it flattens, "
                "near 0 only the most likely token is left (greedy). top-k and top-p then cut the "
                "tail; cut tokens are grey and are never drawn."
            )
        )
        left.addWidget(self.scale_button)
        left.addLayout(form)
        left.addWidget(self.draw_button)
        left.addWidget(self.sample_label)
        left.addWidget(self.summary)
        left.addStretch(1)
        holder = QWidget()
        holder.setLayout(left)
        holder.setMaximumWidth(380)
        self.bars = TokenBars("Next token after temperature, top-k and top-p")
        row = QHBoxLayout(self)
        row.addWidget(holder)
        row.addWidget(self.bars, 1)
        self.temperature.valueChanged.connect(self._emit)
        self.top_p.valueChanged.connect(self._emit)
        self.top_k.valueChanged.connect(self._emit)
        self.seed.valueChanged.connect(self._emit)
        self.draw_button.clicked.connect(self.draw)
        self.scale_button.clicked.connect(self.open_scale)

    def settings(self) -> Settings:
        top_k = self.top_k.value() or None
        return Settings(self.temperature.value(), top_k, self.top_p.value()).check()

    def _emit(self, *_args) -> None:
        self.changed.emit(self.settings())

    def show(self, snap: Snapshot | None) -> None:
        if snap is None:
            return
        d = snap.dist
        self.bars.set_bars(
            snap.labels, [c.prob for c in snap.choices], [c.kept for c in snap.choices], snap.rest
        )
        kept = int(d.kept.sum())
        self.summary.setText(
            f"{kept:,} of {d.probs.size:,} tokens can be drawn; together they held "
            f"{d.probs[d.kept].sum():.1%} before renormalising. Entropy {d.entropy:.2f} nats."
        )

    def show_sample(self, label: str, prob: float) -> None:
        self.sample_label.setText(f"Drawn (seed {self.seed.value()}): {label}, p = {prob:.1%}")
