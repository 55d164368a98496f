"""The circuit drawing's captions (heads' names, q/k/v letters) never overlap one another or a node
and are never cut at its edge, at three text sizes, however crowded the circuit; a sparse circuit
names every head it shows."""

import itertools

import pytest
from PySide6.QtCore import QPointF
from PySide6.QtGui import QFont
from PySide6.QtWidgets import QApplication

from app.panels.circuits.drawing import NODE_PX, CircuitView
from core.decoder.edges import Graph
from core.interp.circuits import Edge

GRAPH = Graph(30, 9, 3)


def crowded() -> list[Edge]:
    """Every head of layers 23 and 24 into the query of every head of layer 25, then into the logits."""
    senders = [1 + layer * 10 + h for layer in (22, 23) for h in range(9)]
    queries = [24 * GRAPH.per_layer + h for h in range(9)]
    edges = [Edge(s, q, 0.5 - 0.001 * k) for k, (s, q) in enumerate(itertools.product(senders, queries))]
    return edges + [Edge(1 + 24 * 10 + h, GRAPH.receivers - 1, 0.3) for h in range(9)]


def drawn(view: CircuitView, edges: list[Edge]) -> tuple[list, list]:
    heads = {GRAPH.receiver_names[e.receiver][0] for e in edges} - {"logits"}
    nodes = sorted({GRAPH.sender_names[e.sender] for e in edges} | {n for n in heads if " H" in n})
    view.show_circuit(GRAPH, edges, [*nodes, "logits"], ["edge"] * len(edges))
    QApplication.processEvents()
    shown = [item for item in view.captions if item.isVisible()]
    return shown, [item.sceneBoundingRect() for item in shown]


@pytest.fixture(params=[0.8, 1.0, 1.75], ids=["small", "normal", "large"])
def view(qtbot, request):
    app = QApplication.instance()
    font = app.font()
    larger = QFont(font)
    larger.setPointSizeF(font.pointSizeF() * request.param)
    app.setFont(larger)
    v = CircuitView()
    qtbot.addWidget(v)
    v.resize(700, 650)
    v.show()
    QApplication.processEvents()
    yield v
    app.setFont(font)


def test_no_caption_overlaps_another_or_a_node(view):
    shown, boxes = drawn(view, crowded())
    assert len(shown) >= 9  # most of layer 25's names fit even here
    for a, b in itertools.combinations(boxes, 2):
        assert not a.intersected(b).isValid() or a.intersected(b).isEmpty(), (a, b)
    box = view.view.getPlotItem().getViewBox()
    drawing = box.sceneBoundingRect()
    assert all(drawing.contains(rect) for rect in boxes)  # none cut at the drawing's edge
    for x, y in view.node_at:
        centre = box.mapViewToScene(QPointF(x, y))
        for rect in boxes:
            grown = rect.adjusted(-NODE_PX / 2 + 1, -NODE_PX / 2 + 1, NODE_PX / 2 - 1, NODE_PX / 2 - 1)
            assert not grown.contains(centre), (rect, centre)


def test_a_sparse_circuit_names_every_head_and_input(view):
    into_logits = Edge(1 + 23 * 10 + 3, GRAPH.receivers - 1, 0.5)  # L24 H4 → logits
    into_query = Edge(1 + 22 * 10 + 0, 23 * GRAPH.per_layer + 3, 0.2)  # L23 H1 → L24 H4's query
    shown, _ = drawn(view, [into_logits, into_query])
    assert sorted(item.toPlainText() for item in shown) == ["H1", "H4", "q"]


def test_names_near_the_edge_stay_inside_a_narrow_drawing(view):
    mlps = [Edge(1 + layer * 10 + 9, GRAPH.receivers - 1, 0.4) for layer in (0, 21, 23, 29)]  # MLP → logits
    view.resize(300, 650)
    QApplication.processEvents()
    shown, boxes = drawn(view, mlps)
    drawing = view.view.getPlotItem().getViewBox().sceneBoundingRect()
    assert shown and all(drawing.contains(rect) for rect in boxes)
