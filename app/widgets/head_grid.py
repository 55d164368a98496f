"""HeadGrid: every head of a model at once, one small heatmap per layer and head.

All the small maps live in one image item (gaps between tiles are left empty), so a whole
model redraws with one ``setImage``. The tiles come ready from core.maths.head_tiles (a long text's
maps shrunk to block means), computed where the weights are: in the worker for long texts.
Clicking a tile emits its (layer, head).
"""

from __future__ import annotations

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QEvent, QRectF, Signal
from PySide6.QtGui import QColor, QPalette, QPen
from PySide6.QtWidgets import QGraphicsRectItem, QVBoxLayout, QWidget

from app.widgets.colors import colormap
from app.widgets.text import note
from core.maths.head_tiles import HeadTiles

OUTLINE = QColor("#ff8c00")
HINT = "Rows are layers, columns are heads. Click a head to open it large."


class HeadGrid(QWidget):
    """``set_data(core.maths.head_tiles.HeadTiles, levels)``; ``select(layer, head)`` outlines a tile.

    Signals: clicked(layer, head), 0-based. Tiles are labelled from 1 for people.
    """

    clicked = Signal(int, int)

    def __init__(self, parent=None):
        super().__init__(parent)
        self.shape = (0, 0, 0, 0)  # of the tiles as drawn
        self.gap = 1
        self.levels = (0.0, 1.0)
        self.reduced = False  # True when tiles show block means of a long text
        self.labels: list[pg.TextItem] = []
        self.describer = None  # (row, col) -> hover text, when rows and columns are not layers and heads
        self.view = pg.GraphicsLayoutWidget()
        self.plot = self.view.addPlot()
        self.plot.invertY(True)
        self.plot.setAspectLocked(True)
        self.plot.setMouseEnabled(x=False, y=False)
        self.plot.setMenuEnabled(False)
        self.plot.hideButtons()
        for side in ("left", "bottom"):
            self.plot.hideAxis(side)
        self.image = pg.ImageItem(axisOrder="row-major")
        self.image.setColorMap(colormap(False))
        self.plot.addItem(self.image)
        self.outline = QGraphicsRectItem()
        self.outline.setPen(QPen(OUTLINE, 0))
        self.outline.setZValue(10)
        self.outline.hide()
        self.plot.addItem(self.outline)
        self.readout = note(HINT)  # names heads and tokens; wraps rather than widening the view
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.view, 1)
        layout.addWidget(self.readout)
        self.view.scene().sigMouseClicked.connect(self._on_click)
        self.view.scene().sigMouseMoved.connect(self._on_move)

    def set_data(self, tiles: HeadTiles, levels: tuple[float, float] = (0.0, 1.0)) -> None:
        """Draw ``tiles.maps`` (layers, heads, n, m), each tile as it is (core.maths.head_tiles)."""
        maps, self.reduced = tiles.maps, tiles.reduced
        reshaped = maps.shape != self.shape
        self.shape, self.levels = maps.shape, levels
        n, m = maps.shape[2:]
        self.gap = tiles.gap
        image = tiles.mosaic()
        self.image.setImage(image, autoLevels=False, levels=levels)
        self.image.setRect(QRectF(0, 0, image.shape[1], image.shape[0]))
        if reshaped:
            self._place_labels()
            margin = 0.9 * max(n, m)
            width, height = image.shape[1], image.shape[0]
            self.plot.setRange(xRange=(-margin, width), yRange=(-margin, height), padding=0.02)

    def _place_labels(self) -> None:
        """Head numbers above the columns, layer numbers left of the rows, counted from 1."""
        for label in self.labels:
            self.plot.removeItem(label)
        r, c, n, m = self.shape
        self.labels = []
        for h in range(c):
            label = pg.TextItem(str(h + 1), anchor=(0.5, 1.0))
            label.setPos(self._origin(0, h)[0] + m / 2, -self.gap)
            self.labels.append(label)
        for k in range(r):
            label = pg.TextItem(str(k + 1), anchor=(1.0, 0.5))
            label.setPos(-self.gap, self._origin(k, 0)[1] + n / 2)
            self.labels.append(label)
        for label in self.labels:
            self.plot.addItem(label)
        self._color_labels()

    def _color_labels(self) -> None:
        color = self.palette().color(QPalette.ColorRole.Text)
        for label in self.labels:
            label.setColor(color)

    def changeEvent(self, event) -> None:
        if event.type() == QEvent.Type.PaletteChange:  # the theme changed
            self._color_labels()
        super().changeEvent(event)

    def _origin(self, layer: int, head: int) -> tuple[int, int]:
        """Top-left (x, y) of a tile in image pixels."""
        n, m = self.shape[2:]
        return head * (m + self.gap), layer * (n + self.gap)

    def select(self, layer: int | None, head: int | None = None) -> None:
        """Outline the tile of (layer, head); None hides the outline."""
        if layer is None or head is None:
            self.outline.hide()
            return
        x, y = self._origin(layer, head)
        n, m = self.shape[2:]
        pad = self.gap / 2
        self.outline.setRect(QRectF(x - pad, y - pad, m + 2 * pad, n + 2 * pad))
        self.outline.show()

    def tile_at(self, scene_pos) -> tuple[int, int] | None:
        """(layer, head) under a scene position, or None between tiles or outside."""
        if not self.plot.vb.sceneBoundingRect().contains(scene_pos) or not self.shape[0]:
            return None
        p = self.plot.vb.mapSceneToView(scene_pos)
        r, c, n, m = self.shape
        head, dx = divmod(int(np.floor(p.x())), m + self.gap)
        layer, dy = divmod(int(np.floor(p.y())), n + self.gap)
        if 0 <= layer < r and 0 <= head < c and dx < m and dy < n:
            return layer, head
        return None

    def _on_click(self, event) -> None:
        tile = self.tile_at(event.scenePos())
        if tile is not None:
            self.clicked.emit(*tile)

    def set_describer(self, describer) -> None:
        """``describer(row, col) -> str`` replaces the hover text "layer …, head …" (0-based)."""
        self.describer = describer

    def _on_move(self, scene_pos) -> None:
        tile = self.tile_at(scene_pos)
        if tile is not None:
            n, m = self.shape[2:]
            note = f" Each tile shows block means, {n} × {m}." if self.reduced else ""
            what = (
                self.describer(*tile)
                if self.describer
                else f"layer {tile[0] + 1}, head {tile[1] + 1}: click to open it large."
            )
            self.readout.setText(what + note)
