"""Step 2: temperature, top-k and top-p reshape the distribution live (no model run); a seeded draw."""

from __future__ import annotations

from PySide6.QtWidgets import QFormLayout, QPushButton, QWidget

from app.panels.binding import bind
from app.panels.next_token import scripts
from app.panels.next_token.state import context_notice, snapshot
from app.panels.next_token.writing import Writing
from app.panels.scripts import Script
from app.panels.step import Notice, Step
from app.widgets import LabelledSlider
from app.widgets.spin_boxes import spin
from app.widgets.text import note
from app.widgets.token_bars import TokenBars

MAX_TOP_K = 1000
DRAW_HINT = "Press Draw a token to sample one from these bars."


class TemperaturePage(Step):
    """Its Scale button is the panel's to connect (it opens another panel)."""

    def __init__(self, writing: Writing):
        super().__init__(writing.text)
        self.writing = writing
        self.settings = settings = self.follow(writing.sampling)
        s = settings.state
        self.temperature = bind(
            LabelledSlider("Temperature", 0.05, 5.0, s.temperature, log=True), settings, "temperature"
        )
        self.top_p = bind(LabelledSlider("top-p", 0.05, 1.0, s.top_p), settings, "top_p")
        self.top_k = spin(s.top_k, 0, MAX_TOP_K)
        self.top_k.setSpecialValueText("off")
        bind(self.top_k, settings, "top_k")
        self.seed = bind(spin(s.seed, 0, 9999), settings, "seed")
        self.draw_button = QPushButton("Draw a token")
        self.scale_button = QPushButton("Open the Scale panel")
        self.summary = note()
        self.sample_label = note(DRAW_HINT)
        controls = QFormLayout()
        controls.addRow(self.scale_button)
        controls.addRow(self.temperature)
        controls.addRow("top-k", self.top_k)
        controls.addRow(self.top_p)
        controls.addRow("Seed", self.seed)
        controls.addRow(self.draw_button)
        self.bars = TokenBars("Next token after temperature, before renormalising (cut tokens grey)")
        self.layout_with(
            "The logits are divided by a temperature before the softmax: the same step the Scale panel "
            "applies to attention scores. Below 1 the peak sharpens, above 1 it flattens, near 0 only the "
            "best token is left (greedy). top-k and top-p cut the tail; cut tokens are grey, never drawn.",
            controls,
            self.bars,
            (self.sample_label, self.summary),
        )
        self.draw_button.clicked.connect(self.draw_sample)

    def views(self) -> dict[str, QWidget]:
        return {"sampling": self.bars.plot}

    def script(self) -> Script:
        s = self.settings.state
        return scripts.temperature(self.state.run, self.result, s, self.writing.streams.preview.count)

    def draw(self, generation) -> Notice:
        snap = snapshot(generation, self.settings.result)
        d = snap.dist
        self.bars.set_bars(
            snap.labels, [c.prob for c in snap.choices], [c.kept for c in snap.choices], snap.rest
        )
        self.summary.setText(
            f"{int(d.kept.sum()):,} of {d.probs.size:,} tokens can be drawn; together they held "
            f"{d.probs[d.kept].sum():.1%} before renormalising. Entropy {d.entropy:.2f} nats."
        )
        self.sample_label.setText(DRAW_HINT)  # a token drawn earlier came from other bars
        return context_notice(generation)

    def draw_sample(self) -> None:
        """One seeded draw from the bars shown (step 2's own stream: no token is appended)."""
        drawn = self.writing.draw_preview()
        if drawn is not None:
            label, prob = drawn
            self.sample_label.setText(f"Drawn (seed {self.settings.state.seed}): {label}, p = {prob:.1%}")
