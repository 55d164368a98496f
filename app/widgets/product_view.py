"""ProductView: A · B = C drawn as three matrices; clicking a cell of C shows how it was made.

The row of A and the column of B that make C[i, j] are highlighted, and ``explainer(i, j)`` (a
written-out dot product from core.explain) appears underneath.
"""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QFrame, QHBoxLayout, QLabel, QScrollArea, QVBoxLayout, QWidget

from app.widgets.matrix_view import MatrixView


def _operator(symbol: str) -> QLabel:
    label = QLabel(symbol)
    label.setAlignment(Qt.AlignmentFlag.AlignHCenter | Qt.AlignmentFlag.AlignTop)
    label.setContentsMargins(4, label.fontMetrics().height() * 2, 4, 0)
    font = label.font()
    font.setPointSizeF(font.pointSizeF() * 1.6)
    label.setFont(font)
    return label


class ProductView(QWidget):
    def __init__(self, a: MatrixView, b: MatrixView, c: MatrixView, parent=None):
        super().__init__(parent)
        self.a, self.b, self.c = a, b, c
        self.explainer: Callable[[int, int], str] | None = None
        self.selected: tuple[int, int] | None = None
        row = QHBoxLayout()
        for widget in (a, _operator("·"), b, _operator("="), c):
            row.addWidget(widget, 0, Qt.AlignmentFlag.AlignTop)
        row.addStretch(1)
        self.explanation = QLabel("Click a cell of the result to see how it is made.")
        self.explanation.setWordWrap(True)
        self.explanation.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        strip = QWidget()
        strip.setLayout(row)
        scroller = QScrollArea()
        scroller.setWidget(strip)
        scroller.setWidgetResizable(True)
        scroller.setFrameShape(QFrame.Shape.NoFrame)
        layout.addWidget(scroller, 1)
        layout.addWidget(self.explanation)
        c.clicked.connect(self.select)

    def set_explainer(self, explainer: Callable[[int, int], str]) -> None:
        self.explainer = explainer
        self.c.set_describer(explainer)

    def select(self, i: int, j: int) -> None:
        """Highlight row i of A, column j of B and cell (i, j) of C, and explain C[i, j]."""
        n, m = self.c.values.shape
        if not (0 <= i < n and 0 <= j < m):
            self.clear_selection()
            return
        self.selected = (i, j)
        self.a.highlight(rows=[i])
        self.b.highlight(cols=[j])
        self.c.highlight(cells=[(i, j)])
        if self.explainer:
            self.explanation.setText(f"{self.c.describe(i, j)}")

    def clear_selection(self) -> None:
        self.selected = None
        for view in (self.a, self.b, self.c):
            view.highlight()
        self.explanation.setText("Click a cell of the result to see how it is made.")

    def refresh(self) -> None:
        """Re-apply the selection after the matrices changed (or drop it if it no longer fits)."""
        if self.selected is not None:
            self.select(*self.selected)
