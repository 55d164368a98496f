"""Step 2: the residual stream patched at one (layer, position) at a time; a click shows that
run's predictions and outlines the cells the patch can influence."""

from __future__ import annotations

from PySide6.QtWidgets import QFormLayout, QWidget

from app.panels.patching import scripts
from app.panels.patching.state import PairResult
from app.panels.patching.sweep import SweepStep, beside, grid_map, show_grid, show_top
from app.panels.scripts import Script
from app.panels.step import Live, Notice
from app.widgets.text import note
from app.widgets.token_bars import TokenBars


class StreamPage(SweepStep):
    view = "stream"

    def __init__(self, live: Live):
        super().__init__(live)
        self.map = grid_map("Clean stream copied in (0 = corrupted, 1 = clean)")
        self.bars = TokenBars("Click a cell")
        self.status = note()
        self.picked = note()
        controls = QFormLayout()
        self.sweep_rows(controls)
        self.layout_with(
            "Each cell is one run of the corrupted prompt with the clean residual stream copied in "
            "at one position, after the embeddings (row 0) or after a layer. Watch the answer move "
            "from the changed token to the last position.",
            controls,
            beside(self.map, self.bars, stretch=(2, 1)),
            (self.status, self.picked),
        )
        self.map.clicked.connect(self.pick)

    def views(self) -> dict[str, QWidget]:
        return {"stream": self.map}

    def script(self) -> Script:
        return scripts.stream(self.state)

    def pick(self, row: int, column: int) -> None:
        """Choose the cell at ``row``, ``column`` (from 0): its run's next tokens are computed."""
        self.apply(row=row + 1, column=column + 1)

    def show(self, r: PairResult) -> Notice:
        grid = r.grids.get("resid")
        show_grid(self.map, grid, pair=r.pair)
        self.status.setText(self.progress_text(grid))
        s = r.state
        if grid is None or r.cell_top is None:
            self.picked.setText("Click a cell: its run's next tokens show beside the grid.")
            self.bars.plot.setTitle("Click a cell")
            self.bars.clear()
            return None
        row, column = s.row - 1, s.column - 1
        n, m = grid.raw.shape
        self.map.mark(row, column, rows=n - row, cols=m - column)
        self.picked.setText(
            f"{grid.rows[row]}, position {grid.columns[column]}: {grid.values[row, column]:.2f}. "
            "The outline holds what this copy can change: later layers, same and later positions."
        )
        self.bars.plot.setTitle(f"{grid.rows[row]}, {grid.columns[column]}")
        show_top(self.bars, r.cell_top)
        return None
