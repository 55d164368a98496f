"""ClockHands: 2-D vectors drawn as hands on a row of dials, one dial per pair of numbers.

Each dial shows one hand per named vector (an arrow from the centre). Hands are scaled per dial
so the longest hand of that dial reaches the rim; turning a hand never changes its length.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QSizeF
from PySide6.QtWidgets import QGraphicsSimpleTextItem

from app.widgets.plots import place_captions

SPACING = 2.8  # distance between neighbouring dial centres, in dial radii
ROW_SPACING = 3.4  # distance between rows of dials, leaving room for two-line titles
TITLE_HEIGHT = 0.9  # dial radii of room under a dial for its title
CIRCLE = np.linspace(0.0, 2 * np.pi, 65)


class ClockHands(pg.PlotWidget):
    """``set_dials(titles)`` lays out the dials; ``set_hands([(n_dials, 2), ...])`` turns them.

    One colour per hand name, in the order given to the constructor.
    """

    def __init__(self, names: Sequence[str], colors: Sequence[str], per_row: int = 8, parent=None):
        super().__init__(parent)
        self.names, self.colors, self.per_row = list(names), list(colors), per_row
        self.setAspectLocked(True)
        self.setMouseEnabled(x=False, y=False)
        self.setMenuEnabled(False)
        self.hideButtons()
        self.hideAxis("left")
        self.hideAxis("bottom")
        legend = self.addLegend(offset=(4, 4))
        self.rims = pg.PlotDataItem(pen=pg.mkPen("#9a9a9a", width=1), connect="finite")
        self.addItem(self.rims)
        self.lines = [
            self.plot(pen=pg.mkPen(c, width=3), connect="pairs", name=n)
            for n, c in zip(self.names, self.colors, strict=True)
        ]
        legend.setVisible(bool(self.names))
        self.arrows: list[list[pg.ArrowItem]] = [[] for _ in self.names]
        self.titles: list[QGraphicsSimpleTextItem] = []
        self.title_texts: list[str] = []
        self.getViewBox().sigTransformChanged.connect(self._place_titles)  # resized: refit the titles
        self.centres = np.zeros((0, 2))
        self.hands: list[np.ndarray] = []

    def set_dials(self, titles: Sequence[str]) -> None:
        """One dial per title, ``per_row`` to a row; arrows and titles are reused when possible."""
        k = len(titles)
        cols = min(k, self.per_row)
        idx = np.arange(k)
        self.centres = np.column_stack([(idx % self.per_row) * SPACING, -(idx // self.per_row) * ROW_SPACING])
        if k != len(self.titles):
            self._resize_pool(k)
        self.title_texts = list(titles)
        rim = np.full((k, CIRCLE.size + 1, 2), np.nan)
        rim[:, :-1, 0] = self.centres[:, :1] + np.cos(CIRCLE)
        rim[:, :-1, 1] = self.centres[:, 1:] + np.sin(CIRCLE)
        self.rims.setData(rim[..., 0].ravel(), rim[..., 1].ravel())
        rows = (k + self.per_row - 1) // self.per_row
        self.setRange(
            xRange=(-1.2, (cols - 1) * SPACING + 1.2),
            yRange=(-(rows - 1) * ROW_SPACING - 2.0, 1.6),
            padding=0,
        )
        self._place_titles()

    def _place_titles(self) -> None:
        """Each title under its dial, as large as the room there allows, up to the text size."""
        below = [(x, y - 1.05 - TITLE_HEIGHT / 2) for x, y in self.centres]  # under each rim
        box = QSizeF(0.95 * SPACING, TITLE_HEIGHT)
        place_captions(self.titles, self.title_texts, self.font(), below, box, self.getViewBox(), flip=True)

    def _resize_pool(self, k: int) -> None:
        for text in self.titles[k:]:
            self.removeItem(text)
        self.titles = self.titles[:k]
        while len(self.titles) < k:
            self.titles.append(QGraphicsSimpleTextItem())
            self.addItem(self.titles[-1], ignoreBounds=True)
        for arrows, color in zip(self.arrows, self.colors, strict=True):
            for arrow in arrows[k:]:
                self.removeItem(arrow)
            del arrows[k:]
            while len(arrows) < k:
                arrow = pg.ArrowItem(angle=0, headLen=14, tipAngle=30, pen=None, brush=color)
                self.addItem(arrow)
                arrows.append(arrow)

    def set_hands(self, hands: Sequence[np.ndarray]) -> None:
        """``hands[h]`` (n_dials, 2): the vector of hand h on each dial."""
        hands = [np.asarray(h, dtype=np.float64) for h in hands]
        self.hands = hands
        lengths = np.max([np.hypot(h[:, 0], h[:, 1]) for h in hands], axis=0)  # (n_dials,)
        scale = np.divide(1.0, lengths, out=np.zeros_like(lengths), where=lengths > 0)
        for h, line, arrows in zip(hands, self.lines, self.arrows, strict=True):
            tips = self.centres + h * scale[:, None]  # (n_dials, 2)
            segments = np.stack([self.centres, tips], axis=1).reshape(-1, 2)
            line.setData(segments[:, 0], segments[:, 1])
            degrees = np.degrees(np.arctan2(h[:, 1], h[:, 0]))
            for arrow, (x, y), angle in zip(arrows, tips, degrees, strict=True):
                arrow.setPos(x, y)
                arrow.setRotation(180.0 - angle)  # the arrow points left at rotation 0; y is down
