"""Step 2: the residual stream patched at one (layer, position) at a time; a click shows that
run's predictions and outlines the cells the patch can influence."""

from __future__ import annotations

from PySide6.QtWidgets import QFormLayout

from app import worker
from app.panels.patching import scripts
from app.panels.patching.state import PairResult, cell_top
from app.panels.patching.sweep import SweepStep, beside, grid_map, show_grid, show_top
from app.panels.scripts import Script
from app.panels.step import Live, Notice
from app.widgets.text import note
from app.widgets.token_bars import TokenBars


class StreamPage(SweepStep):
    def __init__(self, live: Live, shared: dict | None = None):
        super().__init__(live, shared)
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

    def script(self) -> Script:
        return scripts.stream(self.state)

    def wanted(self, r: PairResult) -> dict[str, tuple]:
        return {"resid": (r.state.key, None)}

    def show(self, r: PairResult) -> Notice:
        grid = self.grids.get("resid")
        show_grid(self.map, grid, pair=r.pair)
        self.status.setText(self.progress_text(grid))
        return None

    def pick(self, row: int, column: int) -> None:
        """Outline what the cell can influence and show its run's next tokens."""
        r = self.result
        grid = self.grids.get("resid")
        if r is None or grid is None:
            return
        n, m = grid.raw.shape
        self.map.mark(row, column, rows=n - row, cols=m - column)
        self.picked.setText(
            f"{grid.rows[row]}, position {grid.columns[column]}: {grid.values[row, column]:.2f}. "
            "The outline holds what this copy can change: later layers, same and later positions."
        )
        self.bars.plot.setTitle(f"{grid.rows[row]}, {grid.columns[column]}")
        worker.run_task(
            cell_top,
            r,
            "resid",
            row,
            column,
            on_result=lambda top: show_top(self.bars, top),
            on_error=self.tell,
        )
