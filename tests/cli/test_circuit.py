"""``circuit`` on a tiny random Llama (no downloads): its JSON against core's own scores and single
edge patches, its text, and its refusals."""

import json

import pytest

from app.main import main
from core.interp import circuits
from core.interp.patching import prepare
from tests.tiny_models import save_tiny_decoder

pytestmark = pytest.mark.models
torch = pytest.importorskip("torch")
CLEAN, CORRUPT = "the cat sat on the mat because the cat", "the dog sat on the mat because the dog"


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    from core import models

    folder = save_tiny_decoder(tmp_path_factory.mktemp("llama"), "llama")
    return folder, models.load_model(folder)


def circuit(folder, *flags):
    pair = ["--clean", CLEAN, "--corrupt", CORRUPT, "--target", "it", "--foil", "was"]
    return ["circuit", "--model", str(folder), *pair, *flags]


def test_the_json_lists_the_top_edges_with_exact_effects_and_the_curve(tiny, capsys):
    folder, model = tiny
    assert main(circuit(folder, "--edges", "6", "--exact", "3", "--json")) == 0, capsys.readouterr().err
    doc = json.loads(capsys.readouterr().out)
    scores = circuits.edge_scores(model, prepare(model, CLEAN, CORRUPT, " it", " was"))
    assert [e["score"] for e in doc["edges"]] == pytest.approx([e.score for e in scores.top(6)])
    assert doc["edges"][0] == {**scores.top(1)[0].describe(scores.graph), "exact": pytest.approx(
        circuits.exact_effects(model, scores, scores.top(1))[0])}  # fmt: skip
    assert [e["exact"] is None for e in doc["edges"]] == [False] * 3 + [True] * 3
    for edge in doc["edges"]:  # both ends as TransformerLens names them, counted from 0
        layers = model.n_layers
        assert edge["from_tl"] == named(edge["from"], "result", layers)
        assert edge["to_tl"] == named(edge["to"], edge["input"], layers)
    magnitudes = [abs(e["score"]) for e in doc["edges"]]
    assert magnitudes == sorted(magnitudes, reverse=True)
    curve = doc["faithfulness"]
    assert curve[0] == {"edges": 0, "recovered": pytest.approx(0.0, abs=1e-5)}
    assert curve[-1] == {"edges": doc["count"], "recovered": pytest.approx(1.0, abs=1e-5)}
    assert 6 in [c["edges"] for c in curve]
    assert doc["nodes"] == circuits.circuit_nodes(scores.graph, scores.circuit(6))
    assert curve[0]["recovered"] == 0.0 and str(curve[0]["recovered"]) == "0.0"  # rounded, no −0.0
    assert doc["metric"]["clean"] == pytest.approx(scores.ends.clean.metric)


def test_every_edge_with_zero_and_the_text(tiny, capsys):
    folder, _ = tiny
    assert main(circuit(folder, "--edges", "0", "--exact", "0", "--method", "eap-ig", "--json")) == 0
    doc = json.loads(capsys.readouterr().out)
    assert len(doc["edges"]) == doc["count"] and doc["method"] == "eap-ig" and doc["steps"] == 5
    assert main(circuit(folder, "--edges", "4", "--exact", "2", "--direction", "noise")) == 0
    out = capsys.readouterr().out
    assert "edges scored (eap, noise)" in out and "faithfulness (edges: recovered): 0: 0.00," in out
    table = out.split("score    exact\n")[1].split("faithfulness")[0].splitlines()
    assert len(table) == 4 and sum(bool(line.split()[-1]) for line in table) == 4
    assert "negative = the edge carries the answer" in out and "from the corrupted run into the clean" in out
    assert main(circuit(folder, "--edges", "1", "--exact", "0")) == 0
    out = capsys.readouterr().out
    assert "positive = it restores the answer" in out
    assert "the circuit's nodes (0): none" in out  # its one edge does not reach the logits


@pytest.mark.parametrize(
    ("flags", "message"),
    [
        (["--edges", "5000"], "Choose 0 to"),
        (["--edges", "3", "--exact", "4"], "--exact 4 is more than the 3 edges"),
    ],
)
def test_bad_input_is_one_clear_line(tiny, capsys, flags, message):
    folder, _ = tiny
    assert main(circuit(folder, *flags)) == 2
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err


def test_flags_out_of_range_stop_at_the_parser(tiny, capsys):
    folder, _ = tiny
    with pytest.raises(SystemExit) as stopped:
        main(circuit(folder, "--steps", "0"))
    assert stopped.value.code == 2
    assert "--steps must be a whole number from 1 to 64" in capsys.readouterr().err


def test_prompts_that_do_not_line_up_are_refused_as_patching_refuses_them(tiny, capsys):
    folder, _ = tiny
    flags = ["--clean", CLEAN, "--corrupt", "the dog sat", "--target", "it", "--foil", "was"]
    assert main(["circuit", "--model", str(folder), *flags]) == 2
    assert "different numbers of tokens" in capsys.readouterr().err


def named(node: str, part: str | None, layers: int) -> dict:
    """The TransformerLens row a node's label ("embeddings", "L2 H3", "L1 MLP", "L2 KV1", "logits")
    and input ("q", "k", "v" or None) stand for, written from the label alone."""
    if node == "embeddings":
        return {"hook": "blocks.0.hook_resid_pre", "layer": 0}
    if node == "logits":
        return {"hook": f"blocks.{layers - 1}.hook_resid_post", "layer": layers - 1}
    layer, unit = node.split()
    layer = int(layer[1:]) - 1
    if unit == "MLP":
        hook = "hook_mlp_out" if part == "result" else "hook_mlp_in"
        return {"hook": f"blocks.{layer}.{hook}", "layer": layer}
    hook = "attn.hook_result" if part == "result" else f"hook_{part}_input"
    return {"hook": f"blocks.{layer}.{hook}", "layer": layer, "head": int(unit.lstrip("HKV")) - 1}
