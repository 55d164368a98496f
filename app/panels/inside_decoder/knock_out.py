"""Step 1: knock heads out and compare the next-token probabilities before and after."""

from __future__ import annotations

import numpy as np
from PySide6.QtWidgets import QComboBox, QFormLayout, QLineEdit, QPushButton, QWidget

from app.panels.inside_decoder import scripts
from app.panels.inside_decoder.state import KnockResult
from app.panels.inside_decoder.views import (
    HeadMap,
    first_token_box,
    map_over_pair,
    show_top,
    toggle_on_click,
    toggled,
    visible,
)
from app.panels.scripts import Script
from app.panels.step import Live, Notice, Step
from app.widgets.spin_boxes import spin
from app.widgets.text import note
from app.widgets.token_bars import TokenBars
from core.interp.ablation import MODES

MODE_NAMES = {"zero": "zero: output set to 0", "mean": "mean over a reference text"}


def mode_box() -> QComboBox:
    box = QComboBox()
    for mode in MODES:
        box.addItem(MODE_NAMES[mode], mode)
    return box


class KnockPage(Step):
    def __init__(self, live: Live):
        super().__init__(live)
        s = self.state
        self.prompt = self.bind(QLineEdit(s.prompt), "prompt")
        self.mode = self.bind(mode_box(), "mode")
        self.first = first_token_box(self)
        self.layer = spin(1, 1, 30)
        self.layer_button = QPushButton("Knock out the whole layer")
        self.reset = QPushButton("Reset: every head back")
        self.summary = note()
        self.tokens = note()
        controls = QFormLayout()
        controls.addRow("Ablation", self.mode)
        controls.addRow(self.first)
        controls.addRow("Layer", self.layer)
        controls.addRow(self.layer_button)
        controls.addRow(self.reset)
        self.grid = HeadMap("Knocked-out heads (click a head)")
        self.before = TokenBars("Every head")
        self.after = TokenBars("Without the crossed heads")
        views = map_over_pair(self.grid, self.before, self.after)
        self.layout_with(
            "Click heads to remove them; the model runs again without them. The prediction with "
            "every head stands on the left, the one without the crossed heads on the right.",
            controls,
            views,
            (self.summary, self.tokens),
            wide=(("Prompt", self.prompt),),
        )
        toggle_on_click(self.grid, self)
        self.layer_button.clicked.connect(self.knock_layer)
        self.reset.clicked.connect(lambda: self.apply(heads=()))

    def views(self) -> dict[str, QWidget]:
        return {"knocked": self.grid, "before": self.before.plot, "after": self.after.plot}

    def knock_layer(self) -> None:
        if self.result is None:
            return
        layer = self.layer.value() - 1
        self.apply(heads=toggled(self.state.heads, *((layer, h) for h in range(self.result.model.n_heads))))

    def script(self) -> Script:
        return scripts.knock_out(self.state)

    def draw(self, r: KnockResult) -> Notice:
        m = r.model
        self.layer.setMaximum(m.n_layers)
        mask = np.zeros((m.n_layers, m.n_heads))
        for layer, head in r.heads:
            mask[layer, head] = 1.0
        self.grid.set_scores(mask, (0.0, 1.0))
        self.grid.set_knocked(r.heads)
        show_top(self.before, m, r.clean)
        show_top(self.after, m, r.ablated)
        self.tokens.setText(
            f"Tokens ({len(r.prompt.ids)}): " + " | ".join(visible(p) for p in r.prompt.pieces)
        )
        named = ", ".join(f"{layer + 1}.{head + 1}" for layer, head in r.heads) or "none"
        where = ", first token too" if r.first else ""
        lines = [f"Knocked out ({r.mode}{where}): {named}."]
        if r.target is not None:
            lines.append(
                f"p({visible(r.target.text)}): {r.clean[r.target.id]:.3f} → {r.ablated[r.target.id]:.3f}."
            )
            before, after = r.logit_diff(r.clean), r.logit_diff(r.ablated)
            if before is not None:
                lines.append(
                    f"Logit difference {visible(r.target.text)} − {visible(r.foil.text)}: "
                    f"{before:.2f} → {after:.2f}."
                )
        self.summary.setText(" ".join(lines))
        return (" ".join(r.notices), "warning") if r.notices else None
