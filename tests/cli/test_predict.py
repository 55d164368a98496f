"""``predict`` and ``models`` on a tiny random Llama (no downloads)."""

import json

import numpy as np
import pytest

from app.main import main
from core import models
from core.interp import prediction
from core.maths import sampling
from tests.tiny_models import head_zeroed_by_hand, save_tiny_llama

pytestmark = pytest.mark.models
pytest.importorskip("torch")

PROMPT = "the cat sat on the mat"


@pytest.fixture(scope="module")
def llama(tmp_path_factory):
    return save_tiny_llama(tmp_path_factory.mktemp("tiny-llama"))


def run_json(capsys, *argv):
    assert main([*argv, "--json"]) == 0, capsys.readouterr().err
    return json.loads(capsys.readouterr().out)


def test_predict_json_equals_core(llama, capsys):
    doc = run_json(
        capsys, "predict", "--text", PROMPT, "--model", str(llama), "--top", "4", "--temperature", "0.5"
    )
    model = models.load_model(llama)
    dist = sampling.reshape(prediction.predict(model, PROMPT).logits, temperature=0.5)
    expected, rest = sampling.top(dist, 4)
    assert [t["id"] for t in doc["top"]] == [c.id for c in expected]
    np.testing.assert_allclose([t["prob"] for t in doc["top"]], [c.prob for c in expected], atol=1e-6)
    assert doc["rest"] == pytest.approx(rest, abs=1e-6) and "".join(doc["tokens"]) == PROMPT
    assert doc["settings"] == {"temperature": 0.5, "top_k": None, "top_p": 1.0} and "generated" not in doc


def test_predict_generates_with_a_seed(llama, capsys):
    argv = [
        "predict",
        "--text",
        PROMPT,
        "--model",
        str(llama),
        "--generate",
        "4",
        "--top-k",
        "3",
        "--seed",
        "5",
    ]
    first, again = run_json(capsys, *argv), run_json(capsys, *argv)
    assert first["generated"] == again["generated"] and 1 <= len(first["generated"]) <= 4
    assert [t["kept"] for t in first["top"]] == [True] * 3 + [False] * 7
    assert main(argv) == 0
    text = capsys.readouterr().out
    assert "generated (seed 5):" in text and "(cut)" in text and "tokens (" in text


def test_models_list_names_kind_and_shape(llama, capsys):
    entries = {m["key"]: m for m in run_json(capsys, "models", "list")}
    assert entries["smollm2"]["installed"] is False and entries["smollm2"]["kind"] == "decoder"
    assert (entries["minilm"]["kind"], entries["minilm"]["layers"], entries["minilm"]["heads"]) == (
        "encoder",
        6,
        12,
    )
    gemma = entries["gemma3"]
    assert (gemma["installed"], gemma["family"], gemma["layers"], gemma["heads"], gemma["kv_heads"]) == (
        False, "Gemma", 18, 4, 1,
    )  # fmt: skip
    assert main(["models", "list"]) == 0
    listing = capsys.readouterr().out
    assert "not added (attention-lab models add smollm2)" in listing
    assert "not added (attention-lab models add gemma3 --accept-terms; Gemma's terms apply)" in listing


def test_gemma3_is_not_fetched_without_a_yes_to_its_terms(capsys):
    assert main(["models", "add", "gemma3"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "https://ai.google.dev/gemma/terms" in err[0] and "--accept-terms" in err[0]


@pytest.mark.parametrize(
    "argv", [["models"], ["models", "add"], ["models", "add", "gpt-5"], ["models", "list", "--json=1"]]
)
def test_models_bad_input_is_one_line(argv, capsys):
    try:
        code = main(argv)
    except SystemExit as exc:
        code = exc.code
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2 and len(err) == 1 and ": error: " in err[0]


def test_predict_with_heads_knocked_out_a_target_a_foil_and_the_logit_lens(llama, capsys):
    from core.interp.ablation import ablated, next_token_probs, run
    from core.interp.lens import logit_lens
    from core.interp.ranking import answer_token

    doc = run_json(
        capsys, "predict", "--text", PROMPT, "--model", str(llama), "--top", "3",
        "--ablate", "2.3", "1.1", "--target", "the", "--foil", " because", "--logit-lens",
    )  # fmt: skip
    model = models.load_model(llama)
    ids = prediction.encode(model, PROMPT)[0]
    assert doc["ablated"] == [  # counted from 1, and as TransformerLens names them, from 0
        {"layer": 1, "head": 1, "tl": {"hook": "blocks.0.attn.hook_z", "layer": 0, "head": 0}},
        {"layer": 2, "head": 3, "tl": {"hook": "blocks.1.attn.hook_z", "layer": 1, "head": 2}},
    ]
    assert doc["ablation"] == "zero"
    assert doc["ablate_first"] is False
    with ablated(model, [(0, 0), (1, 2)]):
        probs = next_token_probs(model, ids)
        logits = run(model, ids)[0][-1].astype(float)
        lens = logit_lens(model, ids, answer_token(model.tokenizer, " the").id)
    assert [t["id"] for t in doc["top"]] == list(np.argsort(-probs)[:3])
    target, clean = doc["target"], run(model, ids)[0][-1].astype(float)
    the, because = answer_token(model.tokenizer, " the").id, answer_token(model.tokenizer, " because").id
    assert target["token"] == " the" and target["prob"] == pytest.approx(probs[the], abs=1e-6)
    assert target["logit_diff"] == pytest.approx(logits[the] - logits[because], abs=1e-5)
    assert target["clean_logit_diff"] == pytest.approx(clean[the] - clean[because], abs=1e-5)
    assert target["clean_logit_diff"] != pytest.approx(target["logit_diff"], abs=1e-6)
    rows = doc["logit_lens"]
    assert [r["layer"] for r in rows] == [1, 2]
    assert [r["id"] for r in rows] == list(lens.top_ids[:, -1])
    assert [r["target_rank"] for r in rows] == list(lens.target_rank)


def test_predict_text_output_names_the_knocked_out_heads(llama, capsys):
    code = main(["predict", "--text", PROMPT, "--model", str(llama), "--ablate", "1.2", "--ablation", "mean",
                 "--target", "the", "--logit-lens"])  # fmt: skip
    out = capsys.readouterr().out
    assert code == 0 and "knocked out (mean, first token left alone): 1.2" in out
    assert "target ␣the: p = " in out and "(every head: " in out
    assert "logit lens" in out and "layer   2:" in out


def zeroed_by_hand(model, ids, layer, head, positions):
    """Next-token logits with ``head``'s slice of ``layer``'s o_proj input set to 0 at
    ``positions``, by a hook written here."""
    import torch

    with head_zeroed_by_hand(model.module, layer, head, positions), torch.inference_mode():
        return model.module(input_ids=torch.tensor([ids])).logits[0, -1].double().numpy()


@pytest.mark.parametrize("first", [False, True])
def test_ablate_first_knocks_heads_out_at_the_first_token_too(llama, capsys, first):
    doc = run_json(
        capsys, "predict", "--text", PROMPT, "--model", str(llama), "--ablate", "1.2",
        "--target", "the", "--foil", " because", *(["--ablate-first"] if first else []),
    )  # fmt: skip
    model = models.load_model(llama)
    ids = prediction.encode(model, PROMPT)[0]
    the = doc["target"]["id"]
    because = doc["target"]["foil_id"]
    kept = zeroed_by_hand(model, ids, 0, 1, slice(1, None))
    every = zeroed_by_hand(model, ids, 0, 1, slice(None))
    expected = every if first else kept
    assert doc["ablate_first"] is first
    assert doc["target"]["logit_diff"] == pytest.approx(expected[the] - expected[because], abs=2e-6)
    assert abs((kept[the] - kept[because]) - (every[the] - every[because])) > 2e-5  # a random model: small


def test_generation_with_heads_knocked_out_leaves_the_first_token_alone(llama, capsys):
    """With the KV cache, each new token is still not the first: it is knocked out."""
    doc = run_json(capsys, "predict", "--text", PROMPT, "--model", str(llama), "--ablate", "1.2",
                   "--generate", "4", "--temperature", "3", "--seed", "3")  # fmt: skip
    model = models.load_model(llama)
    ids = prediction.encode(model, PROMPT)[0]
    numbers = np.random.default_rng(3).random(4)
    for k, token in enumerate(doc["generated"]):
        logits = zeroed_by_hand(model, ids, 0, 1, slice(1, None))
        p = sampling.reshape(logits, 3.0).sampling
        assert token["id"] == int(np.searchsorted(np.cumsum(p), numbers[k], side="right"))
        ids = [*ids, token["id"]]


def test_ablate_first_needs_heads(llama, capsys):
    code = main(["predict", "--text", PROMPT, "--model", str(llama), "--ablate-first"])
    assert code != 0 and "--ablate-first needs --ablate" in capsys.readouterr().err
