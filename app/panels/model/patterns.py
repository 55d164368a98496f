"""Step 5, Patterns: a button per pattern (previous token, next token, [CLS]/[SEP], same word)
names the head that scores highest on the current text; clicking it shows that head's lines and
lists the runners-up under the buttons, kept up to date as the text and options change."""

from __future__ import annotations

from PySide6.QtCore import Signal
from PySide6.QtWidgets import QGroupBox, QPushButton, QVBoxLayout

from app.widgets.message_bar import follow_app_font
from app.widgets.text import note
from core.maths.head_analysis import PATTERNS, HeadRanking

HINT = "Click a pattern to show its head; the runners-up are listed here."


class PatternBox(QGroupBox):
    """One button per pattern with its best head; the text under them says the runners-up."""

    jump = Signal(int, int)  # (layer, head): show this head's lines

    def __init__(self):
        super().__init__("Patterns: the head most like…")
        self.rankings: dict[str, HeadRanking | str] = {}  # per pattern: the ranking, or why there is none
        self.picked: str | None = None  # the pattern last clicked, whose runners-up the text lists
        layout = QVBoxLayout(self)
        self.buttons: dict[str, QPushButton] = {}
        for key, (title, _) in PATTERNS.items():
            button = QPushButton(title)
            button.setStyleSheet("text-align: left; padding: 3px 6px;")
            follow_app_font(button)  # its style sheet would keep it at the font it was built with
            button.clicked.connect(lambda _=False, k=key: self.pick(k))
            layout.addWidget(button)
            self.buttons[key] = button
        self.label = note(HINT)
        layout.addWidget(self.label)

    def show_rankings(self, rankings: dict[str, HeadRanking | str]) -> None:
        """Name each pattern's best head, or disable the pattern with the reason as its tooltip."""
        self.rankings = rankings
        for key, button in self.buttons.items():
            title, ranking = PATTERNS[key][0], rankings[key]
            if isinstance(ranking, str):
                button.setText(f"{title}\nnot in this text")
                button.setToolTip(ranking)
                button.setEnabled(False)
                continue
            button.setText(f"{title}\n{ranking.best}")
            button.setToolTip("click to show this head")
            button.setEnabled(True)
        self._describe()

    def pick(self, key: str) -> str | None:
        """Jump to the head that scores highest on pattern ``key``; the reason when it cannot."""
        ranking = self.rankings.get(key)
        if ranking is None or isinstance(ranking, str):
            return ranking
        self.picked = key
        self._describe()
        self.jump.emit(ranking.best.layer, ranking.best.head)
        return None

    def _describe(self) -> None:
        """List the runners-up of the pattern last clicked, for the rankings shown now; the hint
        when none was clicked or it does not apply to this text."""
        ranking = self.rankings.get(self.picked)
        if isinstance(ranking, HeadRanking):
            others = ", ".join(str(s) for s in ranking.ranked(4)[1:])
            self.label.setText(f"{ranking.what}: {ranking.best}. Next: {others}.")
        else:
            self.label.setText(HINT)
        if self.label.isVisible():  # laid out: its width is real
            self.label.setMinimumHeight(self.label.heightForWidth(self.label.width()))  # all its lines
