"""ProductView: A · B = C drawn as three matrices; clicking a cell of C shows how it was made.

The row of A and the column of B that make C[i, j] are highlighted, and ``explainer(i, j)`` (a
written-out dot product from core.explain) appears underneath.

The three matrices share one cell size, as large as the room allows: on one line when it is wide,
wrapped before "=" (or before "·" too) when the room is tall, whichever gives bigger cells.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
from PySide6.QtCore import QSize, Qt, QTimer
from PySide6.QtWidgets import QFrame, QLabel, QScrollArea, QSizePolicy, QVBoxLayout, QWidget

from app.widgets.matrix_view import MAX_ZOOM, MatrixView

OPERATOR_SCALE = 1.6  # the operators' size relative to the numbers
GAP = 8  # pixels between the pieces of the equation
# Ways to write A · B = C on one or more lines: the pieces (0 A, 1 ·, 2 B, 3 =, 4 C) of each line.
ARRANGEMENTS = (((0, 1, 2, 3, 4),), ((0, 1, 2), (3, 4)), ((0,), (1, 2, 3, 4)), ((0,), (1, 2), (3, 4)))


def _operator(symbol: str) -> QLabel:
    label = QLabel(symbol)
    label.setAlignment(Qt.AlignmentFlag.AlignCenter)
    return label


class ProductView(QWidget):
    def __init__(self, a: MatrixView, b: MatrixView, c: MatrixView, parent=None):
        super().__init__(parent)
        self.a, self.b, self.c = a, b, c
        self.explainer: Callable[[int, int], str] | None = None
        self.selected: tuple[int, int] | None = None
        self.strip = QWidget()
        self.pieces = [a, _operator("·"), b, _operator("="), c]
        for piece in self.pieces:
            piece.setParent(self.strip)
        self.hover = QLabel(" ")  # the hover readout of all three matrices
        self.hover.setWordWrap(True)
        # A long unbreakable token in the readout must not widen the panel: the line wraps or clips.
        self.hover.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Preferred)
        self.hover.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        for view in (a, b, c):
            view.fit = False
            view.readout.hide()
            view.measured.connect(self._schedule)
            view.hovered.connect(lambda i, j, v=view: self.hover.setText(v.describe(i, j)))
        self.explanation = QLabel("Click a cell of the result to see how it is made.")
        self.explanation.setWordWrap(True)
        self.explanation.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.scroller = QScrollArea()
        self.scroller.setWidget(self.strip)
        self.scroller.setWidgetResizable(True)
        self.scroller.setFrameShape(QFrame.Shape.NoFrame)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.scroller, 1)
        layout.addWidget(self.hover)
        layout.addWidget(self.explanation)
        self.pending = False
        c.clicked.connect(self.select)

    # --- layout -----------------------------------------------------------------------------
    def _schedule(self) -> None:
        """Arrange once after a burst of changes (the three matrices are set one after another)."""
        if not self.pending:
            self.pending = True
            QTimer.singleShot(0, self.arrange)

    def resizeEvent(self, event) -> None:
        super().resizeEvent(event)
        self.arrange()

    def changeEvent(self, event) -> None:
        super().changeEvent(event)
        if event.type() == event.Type.FontChange:
            self._schedule()

    def _sizes(self, zoom: float) -> list[QSize]:
        """Each piece's size at ``zoom``, from the matrices' sizes at zoom 1 (titles do not zoom)."""
        sizes = []
        for piece in self.pieces:
            if isinstance(piece, MatrixView):
                n = piece.natural
                title = piece.title.sizeHint()
                sizes.append(
                    QSize(
                        max(round(n.width() * zoom), title.width()),
                        round(n.height() * zoom) + title.height() + piece.layout().spacing(),
                    )
                )
            else:  # the view's own font: the operators' fonts are already zoomed
                size = self.fontMetrics().height() * OPERATOR_SCALE * zoom
                sizes.append(QSize(round(size), round(size)))
        return sizes

    @staticmethod
    def _extent(lines, sizes: list[QSize]) -> QSize:
        width = max(sum(sizes[k].width() for k in line) + GAP * (len(line) - 1) for line in lines)
        height = sum(max(sizes[k].height() for k in line) for line in lines) + GAP * (len(lines) - 1)
        return QSize(width, height)

    def _choose(self, room: QSize):
        """The arrangement and zoom with the biggest cells that fit ``room``; when nothing fits at
        zoom 1, the one that needs no sideways scrolling and least height, else one line."""
        best = None
        for lines in ARRANGEMENTS:
            for zoom in np.arange(MAX_ZOOM, 0.99, -0.05):
                extent = self._extent(lines, self._sizes(zoom))
                if extent.width() <= room.width() and extent.height() <= room.height():
                    if best is None or zoom > best[1] + 1e-6:
                        best = (lines, float(zoom))
                    break
        if best is not None:
            return best
        narrow = [
            (self._extent(lines, self._sizes(1.0)).height(), k)
            for k, lines in enumerate(ARRANGEMENTS)
            if self._extent(lines, self._sizes(1.0)).width() <= room.width()
        ]
        return (ARRANGEMENTS[min(narrow)[1]] if narrow else ARRANGEMENTS[0]), 1.0

    def arrange(self) -> None:
        """Place the pieces for the room the view has now."""
        self.pending = False
        if any(v.natural.isEmpty() for v in (self.a, self.b, self.c)):
            return
        lines, zoom = self._choose(self.scroller.size())
        for view in (self.a, self.b, self.c):
            view.set_zoom(zoom)
        for piece in self.pieces:
            if not isinstance(piece, MatrixView):
                font = self.font()
                font.setPointSizeF(font.pointSizeF() * OPERATOR_SCALE * zoom)
                piece.setFont(font)
        estimates = zip(self.pieces, self._sizes(zoom), strict=True)
        sizes = [p.sizeHint() if isinstance(p, MatrixView) else s for p, s in estimates]
        y = 0
        for line in lines:
            x, height = 0, max(sizes[k].height() for k in line)
            for k in line:
                piece, size = self.pieces[k], sizes[k]
                if isinstance(piece, MatrixView):
                    piece.setGeometry(x, y, size.width(), size.height())
                else:  # beside the middle of the matrices' cells
                    table_top = self.a.title.sizeHint().height() + self.a.layout().spacing()
                    middle = y + table_top + (height - table_top) // 2
                    piece.setGeometry(x, middle - size.height() // 2, size.width(), size.height())
                x += size.width() + GAP
            y += height + GAP
        extent = self._extent(lines, sizes)
        self.strip.setMinimumSize(extent)

    # --- selection --------------------------------------------------------------------------
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
