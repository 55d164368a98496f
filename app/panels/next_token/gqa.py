"""Step 5: grouped-query attention: which query heads share a key/value head, and the weights of
heads that share keys side by side."""

from __future__ import annotations

from PySide6.QtWidgets import QFormLayout, QWidget

from app.panels.next_token import scripts
from app.panels.next_token.state import context_notice
from app.panels.next_token.writing import Writing
from app.panels.scripts import Script
from app.panels.step import Notice, Step
from app.widgets.head_grid import HeadGrid
from app.widgets.spin_boxes import spin
from app.widgets.text import note
from core.interp.kv_cache import query_groups
from core.maths.head_tiles import head_tiles
from core.printing import counted


class GroupsPage(Step):
    def __init__(self, writing: Writing):
        super().__init__(writing.text)
        self.layer_spin = spin(1, 1, 1)
        self.groups = note(rich=True)
        self.groups.setMinimumWidth(260)
        self.grid = HeadGrid()
        self.grid.readout.setText("Rows are key/value heads; each column is a query head that reads it.")
        self.grid.set_describer(self._describe)
        controls = QFormLayout()
        controls.addRow("Layer", self.layer_spin)
        self.layout_with(
            "Each row of the grid is one key/value head and the query heads that share it, with the "
            "weights they give over the prompt.",
            controls,
            self.grid,
            (self.groups,),
        )
        self.layer_spin.valueChanged.connect(lambda _: self.mark_stale())  # redrawn the usual way

    def result_views(self) -> list[QWidget]:
        return [self.grid]  # the grid with the hint under it

    def views(self) -> dict[str, QWidget]:
        return {"shared heads": self.grid.view}

    def _describe(self, row: int, col: int) -> str:
        m = self.result.model
        size = m.n_heads // m.n_kv_heads
        return f"query head {row * size + col + 1} reads key/value head {row + 1}"

    def script(self) -> Script:
        return scripts.groups(self.state.run.model.source, self.state.run.prompt, self.layer_spin.value() - 1)

    def draw(self, generation) -> Notice:
        m = generation.model
        self.layer_spin.setMaximum(m.n_layers)
        layer = self.layer_spin.value() - 1
        groups = query_groups(m.n_heads, m.n_kv_heads)
        weights = generation.prompt.attentions[layer]  # (H, T, T)
        self.grid.set_data(head_tiles(weights[groups]))  # (kv heads, query heads per kv head, T, T)
        lines = [
            f"Key/value head {g + 1} ← query heads {', '.join(str(h + 1) for h in heads)}"
            for g, heads in enumerate(groups)
        ]
        size = len(groups[0])
        how = (
            f"{m.n_heads} query heads share {counted(m.n_kv_heads, 'key/value head')}, {size} each. "
            "Heads in a row "
            "compare their own queries with the same keys, yet they can still look at different tokens."
            if size > 1
            else "Every query head has its own keys and values here: plain multi-head attention."
        )
        self.groups.setText(f"Layer {layer + 1}, weights over the prompt. {how}<br>" + "<br>".join(lines))
        return context_notice(generation)
