"""Step 1: the clean and the corrupted prompt, as the tokenizer splits them, the positions where
they differ marked; the target and the foil; both runs' predictions and metrics."""

from __future__ import annotations

from html import escape

from PySide6.QtWidgets import QComboBox, QFormLayout, QLineEdit

from app.panels.patching import scripts
from app.panels.patching.state import PRESETS, PairResult
from app.panels.patching.sweep import beside, direction_box, show_top
from app.panels.scripts import Script
from app.panels.step import Live, Notice, Step
from app.widgets.text import note
from app.widgets.token_bars import TokenBars
from core.interp.prediction import visible

MARK = "#d62728"


def marked(pieces: tuple[str, ...], differ: tuple[int, ...]) -> str:
    """The pieces joined by thin bars, the differing ones bold and red (HTML)."""
    out = []
    for i, piece in enumerate(pieces):
        text = escape(visible(piece))
        out.append(f'<b style="color:{MARK}">{text}</b>' if i in differ else text)
    return " | ".join(out)


class TwoRunsPage(Step):
    def __init__(self, live: Live):
        super().__init__(live)
        s = self.state
        self.clean = self.bind(QLineEdit(s.clean), "clean")
        self.corrupt = self.bind(QLineEdit(s.corrupt), "corrupt")
        self.target = self.bind(QLineEdit(s.target), "target")
        self.foil = self.bind(QLineEdit(s.foil), "foil")
        self.direction = direction_box(self)
        self.preset = QComboBox()
        self.preset.addItem("Choose a preset…")
        self.preset.addItems(list(PRESETS))
        self.tokens = note(rich=True)
        self.metrics = note(rich=True)
        controls = QFormLayout()
        controls.addRow("Preset", self.preset)
        controls.addRow("Target", self.target)
        controls.addRow("Foil", self.foil)
        controls.addRow("Direction", self.direction)
        self.clean_bars = TokenBars("Clean run")
        self.corrupt_bars = TokenBars("Corrupted run")
        self.layout_with(
            "Two prompts with the same number of tokens: the clean one, and a corrupted one with a "
            "word changed. The metric is logit(target) − logit(foil) at the last position; every "
            "later step shows it normalised: 0 = the corrupted run, 1 = the clean run.",
            controls,
            beside(self.clean_bars, self.corrupt_bars),
            (self.tokens, self.metrics),
            wide=(("Clean", self.clean), ("Corrupted", self.corrupt)),
        )
        self.preset.activated.connect(self.use_preset)

    def use_preset(self, index: int) -> None:
        if index <= 0:
            return
        clean, corrupt, target, foil = PRESETS[self.preset.itemText(index)]
        self.apply(clean=clean, corrupt=corrupt, target=target, foil=foil)

    def script(self) -> Script:
        return scripts.two_runs(self.state)

    def draw(self, r: PairResult) -> Notice:
        p = r.pair
        self.tokens.setText(
            f"<b>Clean</b> ({p.length} tokens): {marked(p.clean_pieces, p.differ)}<br>"
            f"<b>Corrupted</b>: {marked(p.corrupt_pieces, p.differ)}<br>"
            f"They differ at position{'s' if len(p.differ) > 1 else ''} "
            + ", ".join(str(i + 1) for i in p.differ)
        )
        t, f = escape(visible(p.target.text)), escape(visible(p.foil.text))
        self.metrics.setText(
            f"logit({t}) − logit({f}):<br>clean run <b>{r.clean:.3f}</b> (normalised 1), "
            f"corrupted run <b>{r.corrupt:.3f}</b> (normalised 0)."
        )
        show_top(self.clean_bars, r.clean_top)
        show_top(self.corrupt_bars, r.corrupt_top)
        return (" ".join(p.notices), "warning") if p.notices else None
