"""``explain`` and ``predict --direct`` on tiny random models (no downloads), and the encoder."""

import json

import pytest

from app.main import main
from core import models
from core.interp import head
from tests.tiny_models import save_tiny_decoder

pytestmark = pytest.mark.models
pytest.importorskip("torch")

PROMPT = "the cat sat on the mat because the cat"  # the|␣ca|t|␣s|at|␣|on|␣the|␣|mat|␣because|␣the|␣ca|t


@pytest.fixture(scope="module", params=["llama", "gpt2"])
def folder(request, tmp_path_factory):
    return save_tiny_decoder(tmp_path_factory.mktemp(request.param), request.param)


def run_json(capsys, *argv):
    assert main([*argv, "--json"]) == 0, capsys.readouterr().err
    return json.loads(capsys.readouterr().out)


def explain(folder, query="14", key="mat", layer="2", head_="3"):
    return ["explain", "--text", PROMPT, "--model", str(folder), "--layer", layer, "--head", head_,
            "--query", query, "--key", key]  # fmt: skip


def test_explain_json_is_the_heads_real_numbers_and_its_parts_add_up(folder, capsys):
    doc = run_json(capsys, *explain(folder))
    model = models.load_model(folder)
    rec = head.record(model, model.tokenizer(PROMPT)["input_ids"])
    step = head.head_step(rec, 1, 2, 13, 9)
    assert doc["key"] == 10 and doc["tokens"][9] == "mat" and not doc["masked"]
    assert doc["tl"] == {
        "hook": f"blocks.{doc['layer'] - 1}.attn.hook_pattern", "layer": doc["layer"] - 1,
        "head": doc["head"] - 1, "query": doc["query"] - 1, "key": 9,
    }  # fmt: skip
    assert doc["q"] == pytest.approx(step.q.tolist(), abs=1e-6) and doc["k"] == pytest.approx(
        step.k.tolist(), abs=1e-6
    )
    assert doc["weight"] == pytest.approx(step.weight, abs=1e-6) and doc["row"][9] == doc["weight"]
    assert doc["score"] == pytest.approx(doc["dot"] * doc["scale"], abs=1e-5)
    for side in ("query_parts", "key_parts"):
        assert sum(p["value"] for p in doc[side]) == pytest.approx(doc["score"], abs=1e-4)
    assert {"L1 H1", "L1 MLP", "token embedding"} <= {p["part"] for p in doc["query_parts"]}
    assert 0 < len(doc["pairs"]) <= 50 and set(doc["pairs"][0]) == {"query_part", "key_part", "value"}
    assert len(doc["writes"]["up"]) == len(doc["writes"]["down"]) == 10
    assert doc["copy"]["token"] == "mat" and "notes" not in doc


def test_a_key_after_the_query_has_weight_zero_and_the_mask_is_named(folder, capsys):
    doc = run_json(capsys, *explain(folder, query="4", key="10"))
    assert doc["masked"] and doc["weight"] == 0 and "causal mask" in doc["notes"][0]
    assert main(explain(folder, query="4", key="10")) == 0
    assert "exp(−∞) = 0" in capsys.readouterr().out


def test_explain_text_writes_the_dot_product_out(folder, capsys):
    assert main(explain(folder)) == 0
    out = capsys.readouterr().out
    assert "q·k = " in out and "× scale" in out and "query parts (of " in out and "writes up:" in out


def test_a_token_text_that_occurs_twice_asks_which(folder, capsys):
    assert main(explain(folder, key="ca")) == 2
    err = capsys.readouterr().err.strip().splitlines()[-1]
    assert "'ca' occurs at positions 2, 13" in err


def test_predict_direct_shares_sum_to_the_logit_difference(folder, capsys):
    argv = [
        "predict",
        "--text",
        PROMPT,
        "--model",
        str(folder),
        "--target",
        "it",
        "--foil",
        "was",
        "--direct",
    ]
    doc = run_json(capsys, *argv)
    assert doc["direct_sum"] == pytest.approx(doc["logit_difference"], abs=1e-4)
    assert doc["logit_difference"] == pytest.approx(doc["target"]["logit_diff"], abs=1e-4)
    assert doc["direct"][0]["part"] == "embeddings" and {"L2 H1", "L2 MLP"} <= {
        p["part"] for p in doc["direct"]
    }
    assert main(argv) == 0 and "direct shares (final norm frozen)" in capsys.readouterr().out


def test_an_encoder_gets_step_one_and_is_told_why_not_the_rest(capsys):
    argv = [
        "explain",
        "--text",
        "The trophy did not fit.",
        "--model",
        "minilm",
        "--layer",
        "4",
        "--head",
        "2",
    ]
    doc = run_json(capsys, *argv, "--query", "5", "--key", "trophy")
    assert doc["key"] == 3 and 0 < doc["weight"] < 1 and "query_parts" not in doc and "writes" not in doc
    assert "encoder" in doc["notes"][0]


def test_gemma2s_caps_are_named_where_the_parts_add_up_before_them(capsys, tmp_path):
    """Gemma 2 caps its scores and its logits with tanh: the split adds up before each cap, and
    both commands say so."""
    gemma = save_tiny_decoder(tmp_path / "gemma2", "gemma2")
    doc = run_json(capsys, *explain(gemma))
    assert any("before the cap" in n for n in doc["notes"])
    assert sum(p["value"] for p in doc["query_parts"]) == pytest.approx(doc["score"], abs=1e-4)
    argv = ["predict", "--text", PROMPT, "--model", str(gemma), "--target", " the", "--foil", " it"]
    doc = run_json(capsys, *argv, "--direct")
    assert doc["direct_sum"] == pytest.approx(doc["logit_difference"], abs=1e-4)
    assert any("cap" in n for n in doc["notes"])
