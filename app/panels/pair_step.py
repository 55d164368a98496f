"""A step that edits a clean and a corrupted prompt, the answer they are judged by and the
direction of patching: the pair editor Patching and Circuits share, presets included.

    class TwoRunsPage(PairStep):        # its live's state has clean, corrupt, target, foil, direction
        def __init__(self, live):
            super().__init__(live)
            controls = QFormLayout()
            self.add_pair_rows(controls)     # preset, target, foil, direction
            self.layout_with(intro, controls, view, wide=self.pair_wide)
"""

from __future__ import annotations

from html import escape

from PySide6.QtWidgets import QComboBox, QFormLayout, QLineEdit

from app.panels.step import Live, Step
from core.interp.patching import PAIRS, PatchPair
from core.interp.token_text import visible

MARK = "#d62728"
DIRECTIONS = {"denoise": "denoise", "noise": "noise"}  # clean into corrupted; corrupted into clean


def marked(pieces: tuple[str, ...], differ: tuple[int, ...]) -> str:
    """The pieces joined by thin bars, the differing ones bold and red (HTML)."""
    out = []
    for i, piece in enumerate(pieces):
        text = escape(visible(piece))
        out.append(f'<b style="color:{MARK}">{text}</b>' if i in differ else text)
    return " | ".join(out)


def pair_html(p: PatchPair) -> str:
    """Both prompts as the tokenizer splits them, where they differ marked (HTML)."""
    return (
        f"<b>Clean</b> ({p.length} tokens): {marked(p.clean_pieces, p.differ)}<br>"
        f"<b>Corrupted</b>: {marked(p.corrupt_pieces, p.differ)}<br>"
        f"They differ at position{'s' if len(p.differ) > 1 else ''} "
        + ", ".join(str(i + 1) for i in p.differ)
    )


def metrics_html(p: PatchPair, clean: float, corrupt: float) -> str:
    """Both runs' logit(target) − logit(foil), with what each normalises to (HTML)."""
    t, f = escape(visible(p.target.text)), escape(visible(p.foil.text))
    return (
        f"logit({t}) − logit({f}):<br>clean run <b>{clean:.3f}</b> (normalised 1), "
        f"corrupted run <b>{corrupt:.3f}</b> (normalised 0)."
    )


def direction_box() -> QComboBox:
    box = QComboBox()
    box.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToContents)
    for key, text in DIRECTIONS.items():
        box.addItem(text, key)
    box.setToolTip("denoise: clean activations copied into the corrupted run; noise: the other way")
    return box


class PairStep(Step):
    """A step with the pair's fields bound to its live's state."""

    def __init__(self, live: Live):
        super().__init__(live)
        s = self.state
        self.clean = self.bind(QLineEdit(s.clean), "clean")
        self.corrupt = self.bind(QLineEdit(s.corrupt), "corrupt")
        self.target = self.bind(QLineEdit(s.target), "target")
        self.foil = self.bind(QLineEdit(s.foil), "foil")
        self.direction = self.bind(direction_box(), "direction")
        self.preset = QComboBox()
        self.preset.addItem("Choose a preset…")
        self.preset.addItems(list(PAIRS))
        self.preset.activated.connect(self.use_preset)

    @property
    def pair_wide(self) -> tuple:
        """The two prompts, each a row across the page."""
        return (("Clean", self.clean), ("Corrupted", self.corrupt))

    def add_pair_rows(self, controls: QFormLayout) -> None:
        controls.addRow("Preset", self.preset)
        controls.addRow("Target", self.target)
        controls.addRow("Foil", self.foil)
        controls.addRow("Direction", self.direction)

    def use_preset(self, index: int) -> None:
        if index <= 0:
            return
        clean, corrupt, target, foil = PAIRS[self.preset.itemText(index)]
        self.apply(clean=clean, corrupt=corrupt, target=target, foil=foil)
