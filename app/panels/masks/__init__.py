"""Panel "Masks and variants": which keys each query may see, what that does to the weights and
to the cost, −∞ against a finite additive mask, cross-attention, and why training needs a mask.

One state for every step (``state.py``); the mask settings sit above the steps, the cross-attention
texts and the copying switch on their own steps.
"""

from __future__ import annotations

from dataclasses import asdict

from PySide6.QtWidgets import QCheckBox, QComboBox, QLabel, QLineEdit, QPushButton

from app.panels.base import Panel
from app.panels.binding import bind, set_quietly
from app.panels.masks.additive import AdditivePage
from app.panels.masks.copying import CopyPage
from app.panels.masks.cross import CrossPage
from app.panels.masks.kinds import KindsPage
from app.panels.masks.state import MasksState, as_grid, compute_masks, unpadded
from app.panels.step import Live
from app.widgets import LabelledSlider
from app.widgets.reflow_grid import ReflowGrid
from app.widgets.spin_boxes import spin
from app.widgets.text import note
from core.decoder.windows import window_sentence
from core.maths import masks
from core.maths.qkv import MAX_TOKENS
from core.models.registry import known_models

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
        "Cost grows like n·w (about n·(2w − 1) for a window on both sides)."
    ),
    "global_local": "Global + local: a window plus a few tokens linked to all (Longformer, BigBird).",
    "custom": "Custom: any pattern of allowed cells; click the mask to draw one.",
}
PADDING_NOTE = "Padding hides the filler keys of a batch from every query, in encoders and decoders."


class MasksPanel(Panel):
    steps = ("Kinds of mask", "Additive masks", "Cross-attention", "Copying the answer")

    def __init__(self, parent=None):
        super().__init__(parent)
        self.live = Live(MasksState(), compute_masks)
        self._controls()
        self.kinds, self.additive = KindsPage(self.live), AdditivePage(self.live)
        self.cross, self.copying = CrossPage(self.live), CopyPage(self.live)
        self.add_steps(self.kinds, self.additive, self.cross, self.copying)
        self.live.changed.connect(self._show_settings)
        self._show_settings()
        self.set_step(0)

    def _controls(self) -> None:
        """The mask settings, above the steps."""
        s, live = self.live.state, self.live
        self.tokens_edit = bind(QLineEdit(s.text), live, "text")
        self.tokens_edit.setPlaceholderText("words separated by spaces")
        self.kind_combo = QComboBox()
        for kind in masks.KINDS:
            self.kind_combo.addItem(KIND_NAMES[kind], kind)
        self.kind_combo.setCurrentIndex(masks.KINDS.index(s.kind))
        self.kind_combo.currentIndexChanged.connect(lambda _: self._on_kind(self.kind_combo.currentData()))
        self.window_slider = bind(
            LabelledSlider("Window", 1, MAX_TOKENS, s.window, integer=True), live, "window", int
        )
        self.symmetric_box = bind(QCheckBox("Both sides (symmetric)"), live, "symmetric")
        self.global_edit = bind(QLineEdit(s.global_text), live, "global_text")
        self.global_edit.setPlaceholderText("positions, e.g. 0, 5")
        self.pad_spin = bind(spin(s.n_pad, 0, MAX_TOKENS, tracking=True), live, "n_pad")
        self.pad_spin.setSuffix(" trailing tokens")
        self.seed_spin = bind(spin(s.seed, 0, 2**31 - 1, tracking=True), live, "seed")
        self.reset_button = QPushButton("Reset")
        self.reset_button.clicked.connect(self.reset)
        self.family_note = note()
        self.windows = ""  # the sliding windows of the decoders on this computer, read on show
        self._keep_room()
        self.window_slider.setMinimumWidth(220)
        labels = [QLabel(text) for text in ("Tokens", "Seed", "Mask", "Padding", "Global")]
        tokens, seed, mask, padding, global_ = labels
        wide = (  # three short rows, so the panel fits a 1280-pixel projector beside the lesson
            (tokens, 0, 0, 1),
            (self.tokens_edit, 0, 1, 4),
            (seed, 0, 5, 1),
            (self.seed_spin, 0, 6, 1),
            (self.reset_button, 0, 7, 1),
            (mask, 1, 0, 1),
            (self.kind_combo, 1, 1, 1),
            (self.window_slider, 1, 2, 2),
            (self.symmetric_box, 1, 4, 3),
            (padding, 2, 0, 1),
            (self.pad_spin, 2, 1, 1),
            (global_, 2, 2, 1),
            (self.global_edit, 2, 3, 4),
        )
        narrow = (  # larger text: four rows, the seed beside the global positions
            (tokens, 0, 0, 1),
            (self.tokens_edit, 0, 1, 5),
            (seed, 3, 3, 1),
            (self.seed_spin, 3, 4, 1),
            (self.reset_button, 3, 5, 1),
            (mask, 1, 0, 1),
            (self.kind_combo, 1, 1, 1),
            (self.window_slider, 1, 2, 4),
            (padding, 2, 0, 1),
            (self.pad_spin, 2, 1, 1),
            (self.symmetric_box, 2, 2, 4),
            (global_, 3, 0, 1),
            (self.global_edit, 3, 1, 2),
        )
        controls = ReflowGrid(wide, narrow, stretch=(3, 2))
        self.body.addLayout(controls)
        self.body.addWidget(self.family_note)

    @property
    def settings(self) -> MasksState:
        return self.live.state

    @property
    def result(self):
        return self.live.result

    def _on_kind(self, kind: str) -> None:
        """A custom mask starts from the mask on screen; other kinds are built from their settings."""
        if kind == "custom":
            self.live.apply(kind=kind, custom=as_grid(unpadded(self.live.result)))
        else:
            self.live.apply(kind=kind)

    def toggle_cell(self, i: int, j: int) -> None:
        self.kinds.toggle_cell(i, j)

    def hide_first_row(self) -> None:
        self.additive.hide_first_row()

    def reset(self) -> None:
        """Back to the opening example: causal mask with two padding tokens, seed 0."""
        self.live.apply(**asdict(MasksState()))

    def _keep_room(self) -> None:
        """Switching kinds must not move the views below (their relayout costs a frame)."""
        texts = (self._family(kind) for kind in FAMILIES)
        self.family_note.keep_room_for(f"{text} {PADDING_NOTE}" for text in texts)

    def _family(self, kind: str) -> str:
        return f"{FAMILIES[kind]} {self.windows}".strip() if kind == "sliding_window" else FAMILIES[kind]

    def showEvent(self, event) -> None:
        """Read again which decoders here slide (one may have been added since)."""
        super().showEvent(event)
        found = [e for e in known_models() if e.window]
        sentences = [window_sentence(e.name, e.window, e.sliding, e.layers) for e in found]
        windows = " ".join(["On this computer:", *sentences] if sentences else ["No decoder here uses one."])
        if windows != self.windows:
            self.windows = windows
            self._keep_room()
            self._show_settings()

    def _show_settings(self) -> None:
        """What the bindings do not cover: the kind, which controls apply, and the family note."""
        s = self.live.state
        set_quietly(self.kind_combo, s.kind)
        windowed = s.kind in ("sliding_window", "global_local")
        self.window_slider.setEnabled(windowed)
        self.symmetric_box.setEnabled(windowed)
        self.global_edit.setEnabled(s.kind == "global_local")
        self.family_note.setText(" ".join([self._family(s.kind)] + ([PADDING_NOTE] if s.n_pad else [])))

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
        self.cross.queries_edit.setText("")
        self.cross.keys_edit.setText("a b c d e f g h")
        self.copying.copy_box.setChecked(True)
        self.copying.copy_box.setChecked(False)
        self.seed_spin.setValue(3)
        self.reset()
        super().exercise()
        self.set_step(0)
