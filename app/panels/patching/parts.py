"""Step 3: each layer's attention output and MLP output patched per position, side by side."""

from __future__ import annotations

from PySide6.QtWidgets import QFormLayout, QWidget

from app.panels.patching import scripts
from app.panels.patching.state import PairResult
from app.panels.patching.sweep import SweepStep, beside, grid_map, show_grid
from app.panels.scripts import Script
from app.panels.step import Live, Notice
from app.widgets.text import note


class PartsPage(SweepStep):
    view = "parts"

    def __init__(self, live: Live):
        super().__init__(live)
        self.attn_map = grid_map("Attention output copied in")
        self.mlp_map = grid_map("MLP output copied in")
        self.status = note()
        controls = QFormLayout()
        self.sweep_rows(controls)
        self.layout_with(
            "The same sweep for what each layer adds to the stream: its attention output (the only "
            "part that moves information between positions) and its MLP output (written in place).",
            controls,
            beside(self.attn_map, self.mlp_map),
            (self.status,),
        )

    def views(self) -> dict[str, QWidget]:
        return {"attention": self.attn_map, "mlp": self.mlp_map}

    def script(self) -> Script:
        return scripts.parts(self.state)

    def show(self, r: PairResult) -> Notice:
        attn, mlp = r.grids.get("attn"), r.grids.get("mlp")
        show_grid(self.attn_map, attn, pair=r.pair)
        show_grid(self.mlp_map, mlp, pair=r.pair)
        self.status.setText(f"Attention: {self.progress_text(attn)}. MLP: {self.progress_text(mlp)}.")
        return None
