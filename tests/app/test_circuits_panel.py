"""Panel "Circuits" on a tiny random Llama: the circuit, the curves and the exact effects are
core's (checked against hand-written hooks in tests/core/test_circuits.py) for the pair on screen;
the circuit lands before the curves; the slider reuses the scores; a click patches one edge or
opens a head; bad input keeps the last result."""

import numpy as np
import pytest

from app.panels.circuits import CircuitsPanel
from app.panels.circuits.state import CHECKED
from core.interp import circuits
from core.interp.patching import prepare
from core.models import load_model
from tests.app.conftest import idle, settle

pytestmark = pytest.mark.models
torch = pytest.importorskip("torch")

CLEAN = "the cat sat on the mat because the cat"
CORRUPT = CLEAN.replace(" on ", " in ")


@pytest.fixture
def panel(qtbot, llama_folder):
    p = CircuitsPanel()
    qtbot.addWidget(p)
    p.resize(1300, 850)
    p.show()
    idle()
    settle(p.use_model, llama_folder)
    settle(p.live.apply, clean=CLEAN, corrupt=CORRUPT, target="the", foil="because", edges=8)
    return p


@pytest.fixture
def core_scores(llama_folder):
    model = load_model(llama_folder)
    return model, circuits.edge_scores(model, prepare(model, CLEAN, CORRUPT, "the", "because"))


def table(p):
    t = p.circuit.table
    return [[t.item(i, j).text() for j in range(t.columnCount())] for i in range(t.rowCount())]


def test_every_step_shows_cores_numbers_for_the_pair(panel, core_scores):
    model, scores = core_scores
    r = panel.live.result
    assert r is not None and r.missing == "", panel.message.text()
    mask = scores.circuit(8)
    expected = [e.describe(scores.graph) for e in scores.top(8) if mask[e.sender, e.receiver]]
    settle(panel.set_step, 1)
    assert table(panel) == [[d["from"], d["to"], d["input"] or "", f"{d['score']:.3f}"] for d in expected]
    assert r.nodes == tuple(circuits.circuit_nodes(scores.graph, mask))
    curve = circuits.faithfulness(model, scores, circuits.curve_counts(scores.count))
    np.testing.assert_allclose(np.array(r.curves["eap"]), np.array(curve), atol=1e-6)
    settle(panel.set_step, 3)
    x, y = panel.exact.points.getData()
    np.testing.assert_allclose(x, [e.score for e in scores.top(CHECKED)])
    np.testing.assert_allclose(y, circuits.exact_effects(model, scores, scores.top(CHECKED)), atol=1e-6)


def test_the_circuit_lands_before_the_curves_and_the_slider_reuses_the_scores(panel):
    seen = []
    panel.live.changed.connect(lambda: seen.append(panel.live.result.missing))
    settle(panel.live.apply, direction="noise", steps=3)  # a key no other test measures
    assert seen[0] == "the faithfulness curves" and seen[-1] == "" and "the exact effects" in seen
    kept = panel.live.result.scores
    seen.clear()
    settle(panel.circuit.circuit_size.setValue, 3)
    assert panel.live.result.scores is kept and seen == [""]  # nothing measured again
    assert panel.live.result.state.edges == 3


def test_a_clicked_edge_is_patched_alone_and_a_clicked_head_opens_inside_a_head(panel, core_scores, qtbot):
    model, scores = core_scores
    settle(panel.set_step, 1)
    settle(panel.circuit.view.edge_clicked.emit, 0)
    edge, effect = panel.live.result.chosen
    assert edge == panel.live.result.shown[0]
    assert effect == pytest.approx(circuits.exact_effects(model, scores, [edge])[0], abs=1e-6)
    assert f"{effect:+.3f}" in panel.circuit.chosen.text()
    with qtbot.waitSignal(panel.openHead) as opened:
        panel.circuit.view.head_clicked.emit(1, 2)
    assert opened.args[0] == {"source": panel.live.state.source, "prompt": CLEAN, "layer": 2, "head": 3,
                              "query": 0, "key": panel.live.result.pair.differ[0] + 1}  # fmt: skip


def test_bad_input_says_what_to_change_and_keeps_the_circuit(panel):
    before = panel.live.result
    settle(panel.live.apply, edges=10**6)
    assert "Choose 1 to" in panel.message.text() and panel.live.result is before
    settle(panel.live.apply, edges=8, corrupt="the dog")
    assert "different numbers of tokens" in panel.message.text() and panel.live.result is before


def test_cancel_leaves_the_circuit_and_says_what_was_not_measured(panel):
    def stop_at_first():
        if panel.live.result.missing and panel.live.task is not None:
            panel.live.cancel()

    panel.live.changed.connect(stop_at_first)
    settle(panel.live.apply, method="eap-ig", steps=2)
    r = panel.live.result
    assert r.state.method == "eap-ig" and r.curves is None
    settle(panel.set_step, 2)
    assert "Stopped before the curves" in panel.faithful.summary.text()
