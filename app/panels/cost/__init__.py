"""Panel "Cost and FlashAttention": the O(n²) wall, and how tiling gets around the memory part.

Four independent steps: a cost calculator (FLOPs and score-matrix memory against n), the handshake
picture, FlashAttention's online softmax tile by tile, and the cost of sliding-window and sparse
patterns. Every number comes from core.maths (``complexity``, ``flash``, ``masks``) via ``state.py``.
"""

from __future__ import annotations

from app.panels.base import Panel
from app.panels.cost.calculator import CalculatorPage
from app.panels.cost.flash import FlashPage
from app.panels.cost.handshakes import HandshakePage
from app.panels.cost.sparse import SparsePage


class CostPanel(Panel):
    steps = ("Cost calculator", "Handshakes", "FlashAttention tile by tile", "Sliding window and sparse")

    def __init__(self, parent=None):
        super().__init__(parent)
        self.calculator = CalculatorPage()
        self.handshakes = HandshakePage()
        self.flash = FlashPage()
        self.sparse = SparsePage()
        self.add_steps(self.calculator, self.handshakes, self.flash, self.sparse)
        self.set_step(0)

    def exercise(self) -> None:
        for i, page in enumerate((self.calculator, self.handshakes, self.flash, self.sparse)):
            self.set_step(i)
            page.exercise()
        self.set_step(2)
