"""ProductView: A · B = C drawn as three matrices; clicking a cell of C shows how it was made.

The row of A and the column of B that make C[i, j] are highlighted, and ``explainer(i, j)`` (a
written-out dot product from core.maths.explain) appears underneath.

The three matrices share one cell size, as large as the room allows: on one line when it is wide,
wrapped before "=" (or before "·" too) when the room is tall, whichever gives bigger cells. It
asks for its narrowest arrangement's width and, at its width, its flattest arrangement's height,
so the window gives the equation room before the lesson pane.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np
from PySide6.QtCore import QSize, Qt, QTimer
from PySide6.QtWidgets import QFrame, QLabel, QScrollArea, QSizePolicy, QVBoxLayout, QWidget

from app.widgets.matrix_view import FIT_SHARE, MAX_ZOOM, MIN_ZOOM, MatrixView, least_table_size
from app.widgets.sizing import OwnHeight
from app.widgets.text import note

OPERATOR_SCALE = 1.6  # the operators' size relative to the numbers
GAP = 8  # pixels between the pieces of the equation
# Ways to write A · B = C on one or more lines: the pieces (0 A, 1 ·, 2 B, 3 =, 4 C) of each line.
ARRANGEMENTS = (((0, 1, 2, 3, 4),), ((0, 1, 2), (3, 4)), ((0,), (1, 2, 3, 4)), ((0,), (1, 2), (3, 4)))


def _operator(symbol: str) -> QLabel:
    label = QLabel(symbol)
    label.setAlignment(Qt.AlignmentFlag.AlignCenter)
    return label


class ProductView(OwnHeight, QWidget):
    def __init__(self, a: MatrixView, b: MatrixView, c: MatrixView, parent=None):
        super().__init__(parent)
        self.a, self.b, self.c = a, b, c
        self.explainer: Callable[[int, int], str] | None = None
        self.selected: tuple[int, int] | None = None
        self.strip = QWidget()
        self.pieces = [a, _operator("·"), b, _operator("="), c]
        for piece in self.pieces:
            piece.setParent(self.strip)
        self.hover = note(" ")  # the hover readout of all three matrices
        # A long unbreakable token in the readout must not widen the panel: the line wraps or clips.
        self.hover.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Preferred)
        for view in (a, b, c):
            view.fit = False
            view.readout.hide()
            view.measured.connect(self._schedule)
            view.hovered.connect(lambda i, j, v=view: self.hover.setText(v.describe(i, j)))
        self.explanation = note("Click a cell of the result to see how it is made.")
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
        self.updateGeometry()  # the least width follows the matrices' sizes
        if not self.pending:
            self.pending = True
            QTimer.singleShot(0, self, self.arrange)  # dropped if the view is deleted first

    def resizeEvent(self, event) -> None:
        super().resizeEvent(event)
        if event.size().width() != event.oldSize().width():
            self.updateGeometry()  # the least height follows the width
        self.arrange()

    def changeEvent(self, event) -> None:
        super().changeEvent(event)
        if event.type() == event.Type.FontChange:
            self._schedule()

    def minimumSizeHint(self) -> QSize:
        """Room for the narrowest arrangement at MIN_ZOOM (up to one matrix's least width beside
        an operator), so the window gives the equation room before the lesson pane; and as tall
        as the flattest arrangement that fits the current width needs (up to three matrices'
        least height), so a page short of height scrolls rather than this view's matrices."""
        hint = super().minimumSizeHint()
        if any(v.natural.isEmpty() for v in (self.a, self.b, self.c)):
            return hint
        sizes = self._sizes(MIN_ZOOM)
        least = [self._room_for(self._extent(lines, sizes)) for lines in ARRANGEMENTS]
        narrowest = min(least, key=QSize.width)
        most = least_table_size(self)
        width = min(narrowest.width(), most.width() + sizes[1].width() + GAP)
        room = max(self.width(), width)
        height = min((e.height() for e in least if e.width() <= room), default=narrowest.height())
        title = self.a.title.sizeHint().height() + self.a.layout().spacing()
        height = min(height, 3 * (most.height() + title + GAP))
        chrome = hint.height() - self.scroller.minimumSizeHint().height()  # the readouts below
        return QSize(max(hint.width(), width), max(hint.height(), chrome + height))

    @staticmethod
    def _room_for(extent: QSize) -> QSize:
        """The room in which ``extent`` fits (what _choose takes of a room is FIT_SHARE of it)."""
        return QSize(
            math.ceil((extent.width() + 1) / FIT_SHARE), math.ceil((extent.height() + 1) / FIT_SHARE)
        )

    def _sizes(self, zoom: float) -> list[QSize]:
        """Each piece's size at ``zoom``, from the matrices' sizes measured at MIN_ZOOM and zoom 1
        (between them, in proportion; above, scaled: their margins grow more slowly than the
        text). Titles do not zoom."""
        sizes = []
        for piece in self.pieces:
            if isinstance(piece, MatrixView):
                if zoom >= 1.0:
                    width, height = piece.natural.width() * zoom, piece.natural.height() * zoom
                else:
                    share, low, high = (zoom - MIN_ZOOM) / (1.0 - MIN_ZOOM), piece.least, piece.natural
                    width = low.width() + share * (high.width() - low.width())
                    height = low.height() + share * (high.height() - low.height())
                title = piece.title.sizeHint()
                sizes.append(
                    QSize(
                        max(math.ceil(width), title.width()),
                        math.ceil(height) + title.height() + piece.layout().spacing(),
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
        MIN_ZOOM, the one that needs no sideways scrolling and least height, else the narrowest."""
        best = None
        room = QSize(math.floor(room.width() * FIT_SHARE), math.floor(room.height() * FIT_SHARE))
        for lines in ARRANGEMENTS:
            for zoom in np.arange(MAX_ZOOM, MIN_ZOOM - 0.01, -0.05):
                extent = self._extent(lines, self._sizes(zoom))
                if extent.width() <= room.width() and extent.height() <= room.height():
                    if best is None or zoom > best[1] + 1e-6:
                        best = (lines, float(zoom))
                    break
        if best is not None:
            return best
        least = [self._extent(lines, self._sizes(MIN_ZOOM)) for lines in ARRANGEMENTS]
        narrow = [(extent.height(), k) for k, extent in enumerate(least) if extent.width() <= room.width()]
        narrowest = min(range(len(least)), key=lambda k: least[k].width())
        return ARRANGEMENTS[min(narrow)[1] if narrow else narrowest], MIN_ZOOM

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
