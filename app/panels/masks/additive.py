"""Step 2: the mask added to the scores as −∞, −1e9 or −10, and the weight that leaks through;
a fully hidden row shows why the textbook formula gives NaN."""

from __future__ import annotations

from PySide6.QtWidgets import QGridLayout, QPushButton, QVBoxLayout, QWidget

from app.panels.masks import scripts
from app.panels.masks.state import FILL_NAMES, MasksResult, as_grid, key_labels, leak_text, unpadded
from app.panels.scripts import Script
from app.panels.step import Live, Notice, Step
from app.widgets import Heatmap
from app.widgets.tables import fill_table, text_table
from app.widgets.text import note, scrolling
from core.maths import explain


class AdditivePage(Step):
    def __init__(self, live: Live):
        super().__init__(live)
        self.add_maps = [Heatmap(f"Weights, hidden cells + ({name})") for name in FILL_NAMES]
        for k, heatmap in enumerate(self.add_maps):
            heatmap.set_describer(lambda i, j, k=k: self._describe(k, i, j))
        self.add_table = text_table([f"leak, {name}" for name in FILL_NAMES])
        self.empty_note = note()
        self.empty_button = QPushButton("Hide every key from the first query")
        self.empty_button.clicked.connect(self.hide_first_row)
        grid = QGridLayout()
        for k, heatmap in enumerate(self.add_maps):
            grid.addWidget(heatmap, k // 2, k % 2)
        side = QVBoxLayout()
        side.addWidget(scrolling(self.empty_note))  # large text on a small screen: it scrolls
        side.addWidget(self.empty_button)
        side.addWidget(self.add_table, 1)
        grid.addLayout(side, 1, 1)
        self.layout_with(
            "The same mask added to the scores as a number: −∞, a large constant (−1e9) and a small "
            "one (−10). The table gives, per query, the weight that reaches hidden keys.",
            None,
            grid,
        )

    def views(self) -> dict[str, QWidget]:
        return {f"additive_{name}": m for name, m in zip(FILL_NAMES, self.add_maps, strict=True)}

    def hide_first_row(self) -> None:
        """Make a custom mask whose first query may attend to nothing: the fully masked row."""
        grid = unpadded(self.result)
        grid[0] = False
        self.apply(kind="custom", custom=as_grid(grid))

    def script(self) -> Script:
        return scripts.additive(self.state)

    def draw(self, r: MasksResult) -> Notice:
        tokens, keys = r.example.tokens, key_labels(r)
        for heatmap, outcome in zip(self.add_maps, r.additive, strict=True):
            heatmap.set_data(outcome.weights, tokens, keys, levels=(0.0, 1.0))
        fill_table(
            self.add_table, [[leak_text(o.leak[i]) for o in r.additive] for i in range(len(tokens))], tokens
        )
        self.empty_note.setText(self._empty_row_text(r))
        return r.notice

    @staticmethod
    def _empty_row_text(r: MasksResult) -> str:
        if not r.empty.size:
            return (
                "No query has every key hidden. Press the button to hide all keys from the first "
                "query and compare the three choices on that row."
            )
        i = int(r.empty[0])
        return (
            f"Query “{r.example.tokens[i]}” may attend to nothing. Textbook softmax with −∞: the row's "
            "largest value is −∞, and −∞ − (−∞) is not a number, so the whole row turns NaN. "
            "This app's softmax notices the empty row and gives zeros (the −∞ map). With −1e9 "
            "every cell shifts by the same amount, the shift cancels, and the row reads the hidden "
            f"keys as if unmasked: leak {leak_text(r.additive[1].leak[i])}."
        )

    def _describe(self, k: int, i: int, j: int) -> str:
        r = self.result
        o = r.additive[k]
        hidden = "" if r.mask[i, j] else f" (hidden: score {FILL_NAMES[k]} added)"
        return f"logit {explain.num(o.logits[i, j], 3)}{hidden}; row leak {leak_text(o.leak[i])}"
