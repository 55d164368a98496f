"""PatternGrid: a row (or rows) of small pictures, one per pattern vector, each with a caption.

A pattern of h·w numbers is drawn as an h × w picture in greys (+1 dark ink, −1 white paper), so
stored memories, corrupted queries and retrieved states can be compared at a glance. All the
pictures live in one image item; captions are reused text items; one picture can be outlined.
"""

from __future__ import annotations

import copy
from collections.abc import Sequence
from functools import cache

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QRectF, QSize, QSizeF, Qt
from PySide6.QtGui import QColor, QPen
from PySide6.QtWidgets import QGraphicsRectItem, QGraphicsSimpleTextItem, QVBoxLayout, QWidget

from app.widgets.plots import place_captions
from app.widgets.sizing import OwnHeight
from app.widgets.text import note

GAP = 1  # empty pixels between pictures in a row
CAPTION_ROWS = 3  # picture-pixels of room under each picture for its caption
CAPTION_FILL = 0.9  # of that room (and of a picture's width) a caption may take
MIN_PIXEL_LINES = 1 / 3  # a picture-pixel is at least this many text lines tall
OUTLINE = QColor("#ff8c00")


@cache
def ink() -> pg.ColorMap:
    """White paper to dark ink: CET-L1 reversed, built once. pg.colormap.get hands every caller
    the one map it caches, so reversing that one in place would flip it back for the next grid."""
    greys = copy.deepcopy(pg.colormap.get("CET-L1"))  # black → white, a copy of our own
    greys.reverse()  # so +1 is dark ink and −1 white paper
    return greys


class PatternGrid(OwnHeight, QWidget):
    """``set_patterns(patterns (k, h·w), captions, levels, outline)`` draws k pictures of ``shape``."""

    def __init__(self, title: str = "", shape: tuple[int, int] = (8, 8), columns: int = 10, parent=None):
        super().__init__(parent)
        self.shape, self.columns = shape, columns
        self.patterns = np.zeros((0, shape[0] * shape[1]))
        self.captions: list[str] = []
        self.outlined: int | None = None
        self.title = note(title)  # a label, not a plot title, so a long title wraps instead of widening
        self.title.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.view = pg.GraphicsLayoutWidget()
        self.plot = self.view.addViewBox(lockAspect=True, invertY=True, enableMenu=False)
        self.plot.setMouseEnabled(x=False, y=False)
        self.plot.setDefaultPadding(0.02)
        self.plot.enableAutoRange()  # refit whenever the pictures or the widget's size change
        self.image = pg.ImageItem(axisOrder="row-major")
        self.image.setColorMap(ink())
        self.plot.addItem(self.image)
        self.labels: list[QGraphicsSimpleTextItem] = []
        self.outline = QGraphicsRectItem()
        self.outline.setPen(QPen(OUTLINE, 0.35))
        self.outline.setZValue(10)
        self.outline.hide()
        self.plot.addItem(self.outline, ignoreBounds=True)
        self.plot.sigTransformChanged.connect(self._set_captions)  # resized: refit the captions
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.title)
        layout.addWidget(self.view, 1)

    def _mosaic(self) -> tuple[int, int]:
        """(rows, columns) of picture-pixels the pictures and their captions take."""
        h, w = self.shape
        k = max(len(self.patterns), 1)
        return -(-k // self.columns) * (h + CAPTION_ROWS), min(k, self.columns) * (w + GAP) - GAP

    def minimumSizeHint(self) -> QSize:
        """Pictures whose pixels are at least MIN_PIXEL_LINES of a text line, so they grow with the text."""
        rows, _ = self._mosaic()
        least = round(rows * self.fontMetrics().height() * MIN_PIXEL_LINES)
        title = self.title.heightForWidth(max(self.width(), 1)) if self.title.text() else 0
        hint = super().minimumSizeHint()  # the view's own least height, the spacing
        return QSize(hint.width(), max(hint.height(), title + self.layout().spacing() + least))

    def resizeEvent(self, event) -> None:
        super().resizeEvent(event)
        self._fit_height()

    def _fit_height(self) -> None:
        """Take no more height than the width can fill: the pictures keep their shape, so the room
        below them goes to the views around."""
        rows, columns = self._mosaic()
        title = self.title.heightForWidth(self.width()) if self.title.text() else 0
        tallest = max(title + round(self.width() * rows / columns * 1.05), self.minimumSizeHint().height())
        if self.maximumHeight() != tallest:
            self.setMaximumHeight(tallest)

    def set_title(self, title: str) -> None:
        self.title.setText(title)

    def _origin(self, k: int) -> tuple[int, int]:
        """Top-left pixel (x, y) of picture k."""
        h, w = self.shape
        return (k % self.columns) * (w + GAP), (k // self.columns) * (h + CAPTION_ROWS)

    def set_patterns(
        self,
        patterns: np.ndarray,
        captions: Sequence[str] | None = None,
        levels: tuple[float, float] = (-1.0, 1.0),
        outline: int | None = None,
    ) -> None:
        """Draw each row of ``patterns`` (k, h·w) as a picture; ``outline`` marks one of them."""
        h, w = self.shape
        patterns = np.atleast_2d(np.asarray(patterns, dtype=np.float64))
        if patterns.shape[1] != h * w:
            raise ValueError(f"Each pattern needs {h * w} numbers for a {h} × {w} picture.")
        k = patterns.shape[0]
        self.patterns, self.outlined = patterns, outline
        self.captions = list(captions) if captions is not None else [str(i) for i in range(k)]
        cols, rows = min(k, self.columns), -(-k // self.columns)
        mosaic = np.full((rows * (h + CAPTION_ROWS), cols * (w + GAP) - GAP), np.nan)
        for i, p in enumerate(patterns):
            x, y = self._origin(i)
            mosaic[y : y + h, x : x + w] = p.reshape(h, w)
        self.image.setImage(mosaic, autoLevels=False, levels=levels)
        self.image.setRect(QRectF(0, 0, mosaic.shape[1], mosaic.shape[0]))
        self._set_captions()
        self._fit_height()
        self.updateGeometry()
        if outline is None or not 0 <= outline < k:
            self.outline.hide()
        else:
            x, y = self._origin(outline)
            self.outline.setRect(QRectF(x - 0.3, y - 0.3, w + 0.6, h + 0.6))
            self.outline.show()

    def _set_captions(self) -> None:
        """Captions in picture-pixels under their pictures (place_captions): they grow and shrink
        with the pictures, so they never overlap a neighbour or fall past the view's edge."""
        h, w = self.shape
        while len(self.labels) < len(self.captions):
            label = QGraphicsSimpleTextItem()
            self.plot.addItem(label, ignoreBounds=True)
            self.labels.append(label)
        for label in self.labels[len(self.captions) :]:
            label.hide()
        shown = self.labels[: len(self.captions)]
        centres = [(x + w / 2, y + h + CAPTION_ROWS / 2) for x, y in map(self._origin, range(len(shown)))]
        box = QSizeF((w + GAP) * CAPTION_FILL, CAPTION_ROWS * CAPTION_FILL)
        place_captions(shown, self.captions, self.font(), centres, box, self.plot)
        for label in shown:
            label.show()
