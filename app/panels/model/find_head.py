"""Step 4, Find a head: pick a token that looks and a token it looks at; every head is ranked by
that one weight, and the best one opens in the heatmap. The list always ranks the pair asked for
on the weights shown; the heatmap jumps to the best head from the button, and once by itself the
first time the step is shown with weights, so the step opens on the head its lesson describes."""

from __future__ import annotations

from PySide6.QtCore import Signal
from PySide6.QtWidgets import QComboBox, QFormLayout, QGroupBox, QListWidget, QPushButton, QVBoxLayout

from app.panels.binding import set_quietly
from app.panels.model.state import ALL_PARTS, DEFAULT_FROM, DEFAULT_TO, numbered
from app.widgets.sizing import OwnHeight
from app.widgets.text import note
from core.maths.head_analysis import HeadRanking, ModelAttention, find_head

RANKING_ROWS = 10


class FindBox(OwnHeight, QGroupBox):
    """From and To tokens, the button, what it found and the ten best heads. Its least height
    holds its form wrapped (label over field): it does not answer height for width."""

    jump = Signal(int, int, int, int)  # (layer, head, from, to): show this head with this cell marked

    def __init__(self):
        super().__init__("Find a head")
        self.ranking: HeadRanking | None = None  # the last ranking, kept current as the text changes
        self.pair: tuple[str, str] = (DEFAULT_FROM, DEFAULT_TO)  # the tokens asked for, as typed
        self.opened = False  # the step has been shown with weights and jumped to its best head
        self.waiting = False  # the step is on screen, not yet opened: jump when the weights come
        self.from_combo, self.to_combo = QComboBox(), QComboBox()
        self.button = QPushButton("Find the head")
        self.label = note("Pick a token that looks and a token it looks at.")
        self.ranking_list = QListWidget()
        form = QFormLayout()
        form.addRow("From", self.from_combo)
        form.addRow("To", self.to_combo)
        layout = QVBoxLayout(self)
        layout.addLayout(form)
        layout.addWidget(self.button)
        layout.addWidget(self.label)
        layout.addWidget(self.ranking_list, 1)
        self.attention: ModelAttention | None = None
        self.part = ALL_PARTS
        self.button.clicked.connect(self.find)
        self.ranking_list.currentRowChanged.connect(self._on_row)

    def show_tokens(self, attention: ModelAttention, part: str) -> None:
        """New weights: list their tokens (keeping the pair asked for) and rank the pair again."""
        self.attention, self.part = attention, part
        items = numbered(attention.labels)
        for combo, wanted in zip((self.from_combo, self.to_combo), self.pair, strict=True):
            exact = [i for i, x in enumerate(items) if x == wanted]
            index = (exact or [i for i, x in enumerate(items) if x.lower() == wanted.lower()] or [0])[0]
            set_quietly(combo, items[index], choices=items)
        self._rank(jump=False)
        if self.waiting:
            self.step_shown(True)

    def step_shown(self, on: bool) -> None:
        """The step came on screen (on) or went: the first time it is shown with weights, jump to
        the best head for the pair asked for (the default sentence's, as the lesson describes)."""
        self.waiting = on and not self.opened
        if self.waiting and self.attention is not None:
            self.opened, self.waiting = True, False
            self.find()

    def find(self) -> None:
        """Rank every head by the weight "from" puts on "to" and jump to the best."""
        if self.attention is None:
            return
        self.pair = (self.from_combo.currentText(), self.to_combo.currentText())
        self._rank(jump=True)

    def _rank(self, jump: bool) -> None:
        i, j = self.from_combo.currentIndex(), self.to_combo.currentIndex()
        if i < 0 or j < 0:
            return
        self.ranking = find_head(self.attention, i, j)
        best = self.ranking.best
        if best.score > 0:
            what = self.ranking.what
            self.label.setText(f"{what}: the best head is {best.label}, weight {best.score:.2f}.")
        else:
            outside = f", or the pair lies outside the {self.part} filter" if self.part != ALL_PARTS else ""
            self.label.setText(f"{self.ranking.what}: no head puts any weight there{outside}.")
        self.ranking_list.clear()  # its "no row" signal jumps nowhere (_on_row)
        self.ranking_list.addItems([str(s) for s in self.ranking.ranked(RANKING_ROWS)])
        if jump:
            self.jump.emit(best.layer, best.head, i, j)

    def _on_row(self, row: int) -> None:
        if self.ranking is not None and row >= 0:
            score = self.ranking.ranked(RANKING_ROWS)[row]
            i, j = self.from_combo.currentIndex(), self.to_combo.currentIndex()
            self.jump.emit(score.layer, score.head, i, j)
