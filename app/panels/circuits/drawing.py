"""The circuit as a layered drawing: the embeddings at the bottom, the logits at the top, one row
per layer with its heads and (a little above them, since it reads after them) its MLP. An edge's
width grows with |score|, its colour gives the sign (red helps the answer, blue works against
it), and a letter near its end says which input of a head it feeds (q, k or v). A shared key or
value (grouped-query attention) ends between the heads that read it."""

from __future__ import annotations

from functools import cache

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import Signal
from PySide6.QtWidgets import QVBoxLayout, QWidget

from app.widgets.plots import plot
from core.decoder.edges import Graph

UP, DOWN = "#d62728", "#1f77b4"  # an edge that helps the answer; one that works against it
DRAWN = 300  # the most edges drawn (the largest |score|)
WIDTHS = (1.0, 2.0, 3.5, 5.5)  # pens by |score| relative to the largest
NEAR_PX = 8  # how close the pointer must be to a node or an edge
NODE_PX = 13  # a node's size on screen


@cache
def layout(graph: Graph) -> tuple[np.ndarray, np.ndarray]:
    """Where every node sits and where an edge into each receiver ends."""
    at = positions(graph)
    return at, receiver_points(graph, at)


def positions(graph: Graph) -> np.ndarray:
    """(S + 1, 2) x, y of every node: the senders in graph order, then the logits."""
    h, out = graph.heads, [(graph.heads / 2 - 0.5, 0.0)]
    for layer in range(graph.layers):
        out += [(float(i), layer + 1.0) for i in range(h)] + [(h + 0.4, layer + 1.45)]
    out.append((h / 2 - 0.5, graph.layers + 2.0))
    return np.array(out)


def receiver_points(graph: Graph, at: np.ndarray) -> np.ndarray:
    """(R, 2): where an edge into each receiver ends (a shared key or value: just below the middle
    of the heads that read it)."""
    return np.array([at[list(n)].mean(0) - (0, 0.3 * (len(n) > 1)) for n in graph.receiver_nodes])


class CircuitView(QWidget):
    """Draws a circuit; hover names an edge, a click on a head or an edge is reported."""

    hovered = Signal(str)
    head_clicked = Signal(int, int)  # layer, head, from 0
    edge_clicked = Signal(int)  # the edge's place in the list drawn, from 0

    def __init__(self):
        super().__init__()
        self.view = plot("The circuit: a row per layer", grid=False)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.view)
        self.pens = {(sign, w): pg.PlotCurveItem(pen=pg.mkPen(UP if sign else DOWN, width=w), connect="pairs")
                     for sign in (True, False) for w in WIDTHS}  # fmt: skip
        for item in self.pens.values():
            self.view.addItem(item)
        self.nodes = pg.ScatterPlotItem(size=NODE_PX, pen=pg.mkPen("#333333"), brush=pg.mkBrush("#ffffff"))
        self.view.addItem(self.nodes)
        self.captions: list[pg.TextItem] = []  # reused: the q, k, v letters and the heads' names
        self.ends = np.zeros((0, 2, 2))  # (edges, from/to, x/y)
        self.node_at = np.zeros((0, 2))
        self.node_names: list[str] = []
        self.texts: list[str] = []
        self.wanted: tuple[list, list] = ([], [])  # the heads' names and the q/k/v letters to place
        self.layers = 0
        self.view.getPlotItem().getViewBox().sigResized.connect(self.place_captions)
        self.view.scene().sigMouseMoved.connect(self._moved)
        self.view.scene().sigMouseClicked.connect(self._clicked)

    def show_circuit(self, graph: Graph, edges: list, nodes: list[str], texts: list[str]) -> None:
        """Draw ``edges`` (core.interp.circuits.Edge, largest |score| first) between ``nodes``
        (names); ``texts`` says each edge when hovered."""
        at, ends = layout(graph)
        names = [*graph.sender_names, "logits"]
        self.ends = np.array([[at[e.sender], ends[e.receiver]] for e in edges]).reshape(-1, 2, 2)
        self.texts = texts
        top = max((abs(e.score) for e in edges), default=1.0) or 1.0
        grouped: dict = {key: [] for key in self.pens}
        for e, (a, b) in zip(edges, self.ends, strict=True):
            width = WIDTHS[min(int(abs(e.score) / top * len(WIDTHS)), len(WIDTHS) - 1)]
            grouped[e.score >= 0, width] += [a, b]
        for key, item in self.pens.items():
            points = np.array(grouped[key]).reshape(-1, 2)
            item.setData(points[:, 0], points[:, 1]) if len(points) else item.setData([], [])
        letters = []  # (text, colour, the edge's ends): which input of a head an edge feeds
        for e, (a, b) in zip(edges, self.ends, strict=True):
            part = graph.receiver_names[e.receiver][1]
            if part is not None:
                letters.append((part, UP if e.score >= 0 else DOWN, (a, b)))
        index = [names.index(n) for n in nodes if n in names]
        self.node_at, self.node_names = at[index].reshape(-1, 2), [names[i] for i in index]
        self.nodes.setData(self.node_at[:, 0], self.node_at[:, 1])
        heads = [
            (n.split()[-1], "#333333", p)
            for n, p in zip(self.node_names, self.node_at, strict=True)
            if n.startswith("L")
        ]  # fmt: skip  (the axis names the embeddings and the logits)
        self.wanted = (heads, letters)
        self.layers = graph.layers
        self.view.getPlotItem().getAxis("bottom").setTicks(
            [[*((h, f"H{h + 1}") for h in range(graph.heads)), (graph.heads + 0.4, "MLP")]]
        )
        self.view.setXRange(-1, graph.heads + 1.2, padding=0)
        self.view.setYRange(-0.6, graph.layers + 2.6, padding=0)
        self.place_captions()

    def place_captions(self) -> None:
        """Put every head's name and every q/k/v letter where it covers no node and no caption
        placed before it (names first, then letters, largest edge first); one with no free place
        is left out (hovering still names it). The layer axis is ticked as densely as its text
        allows. Run again whenever the drawing changes size."""
        heads, letters = self.wanted
        box = self.view.getPlotItem().getViewBox()
        unit = np.array(box.viewPixelSize())  # view units per pixel (x, y)
        if not np.all(np.isfinite(unit)) or not unit.all():
            return
        every = max(1, int(np.ceil(1.4 * self.fontMetrics().height() * unit[1])))
        rows = [(layer + 1, f"L{layer + 1}") for layer in range(0, self.layers, every)]
        self.view.getPlotItem().getAxis("left").setTicks(
            [[(0, "embeddings"), *rows, (self.layers + 2, "logits")]]
        )
        items = self._caption([(text, colour) for text, colour, _ in heads + letters])
        sizes = [np.array([item.boundingRect().width(), item.boundingRect().height()]) for item in items]
        flip = np.array([1.0, -1.0]) / unit  # view units to pixels (pixels grow downwards)
        r = NODE_PX / 2 + 1
        taken = [(p * flip, np.array([NODE_PX, NODE_PX])) for p in self.node_at]
        shown = box.viewRect()  # a caption must fit inside the drawing, not be cut at its edge
        corners = np.array([[shown.left(), shown.top()], [shown.right(), shown.bottom()]]) * flip
        inside = (corners.min(0), corners.max(0))
        spots = []  # each caption's candidate centres, in pixels, best first
        for size, (_, _, at) in zip(sizes[: len(heads)], heads, strict=True):
            w, h = size / 2 + r
            near = [(0, -h), (w, 0), (-w, 0), (0, h), (w, -h), (-w, -h)]
            spots.append([at * flip + np.array(d) for d in near])
        for _, _, (a, b) in letters:
            spots.append([(a + t * (b - a)) * flip for t in (0.8, 0.7, 0.9, 0.6, 0.5, 0.4)])
        for item, size, where in zip(items, sizes, spots, strict=True):
            self._put(item, where, size, taken, flip, inside)

    def _put(self, item, spots, size, taken, flip, inside) -> None:
        """Show ``item`` at the first of ``spots`` (centres, in pixels) where it lies ``inside``
        (least and greatest corner) and overlaps nothing in ``taken`` (centre, size), and add it
        there; else hide it."""
        for spot in spots:
            if np.any(spot - size / 2 < inside[0]) or np.any(spot + size / 2 > inside[1]):
                continue
            if all(np.any(np.abs(spot - centre) * 2 >= size + other) for centre, other in taken):
                taken.append((spot, size))
                x, y = spot / flip
                item.setPos(float(x), float(y))
                item.show()
                return
        item.hide()

    def _caption(self, captions: list[tuple[str, str]]) -> list[pg.TextItem]:
        """Text items for ``captions`` (text, colour), centred on their place, reusing those made
        before; the rest hidden."""
        while len(self.captions) < len(captions):
            self.captions.append(pg.TextItem(anchor=(0.5, 0.5)))
            self.view.addItem(self.captions[-1])
        for item, (text, colour) in zip(self.captions, captions, strict=False):
            item.setText(text, color=colour)
        for item in self.captions[len(captions) :]:
            item.hide()
        return self.captions[: len(captions)]

    def _pixels(self, scene_pos) -> tuple[np.ndarray, np.ndarray]:
        """The pointer in view units, and the size of one pixel in them."""
        box = self.view.getPlotItem().getViewBox()
        point = box.mapSceneToView(scene_pos)
        return np.array([point.x(), point.y()]), np.array(box.viewPixelSize())

    def nearest_edge(self, scene_pos) -> int | None:
        """The drawn edge within NEAR_PX of ``scene_pos``, nearest first, or None."""
        if not len(self.ends):
            return None
        p, pixel = self._pixels(scene_pos)
        a, b = self.ends[:, 0] / pixel, self.ends[:, 1] / pixel
        q = p / pixel
        t = np.clip(((q - a) * (b - a)).sum(1) / np.maximum(((b - a) ** 2).sum(1), 1e-9), 0, 1)
        gaps = np.linalg.norm(a + t[:, None] * (b - a) - q, axis=1)
        best = int(np.argmin(gaps))
        return best if gaps[best] <= NEAR_PX else None

    def nearest_node(self, scene_pos) -> str | None:
        if not len(self.node_at):
            return None
        p, pixel = self._pixels(scene_pos)
        gaps = np.linalg.norm((self.node_at - p) / pixel, axis=1)
        best = int(np.argmin(gaps))
        return self.node_names[best] if gaps[best] <= NEAR_PX else None

    def _moved(self, scene_pos) -> None:
        node, edge = self.nearest_node(scene_pos), self.nearest_edge(scene_pos)
        if node is not None:
            self.hovered.emit(
                f"{node}{'' if head_of(node) is None else ': click to open it in Inside a head'}"
            )
        elif edge is not None:
            self.hovered.emit(self.texts[edge] + " (click for its exact effect)")

    def _clicked(self, event) -> None:
        node = self.nearest_node(event.scenePos())
        head = None if node is None else head_of(node)
        if head is not None:
            self.head_clicked.emit(*head)
            return
        edge = self.nearest_edge(event.scenePos())
        if edge is not None:
            self.edge_clicked.emit(edge)


def head_of(name: str) -> tuple[int, int] | None:
    """(layer, head) from 0 of a head's name ("L3 H2"), else None."""
    parts = name.split()
    if len(parts) == 2 and parts[0][0] == "L" and parts[1][0] == "H":
        return int(parts[0][1:]) - 1, int(parts[1][1:]) - 1
    return None
