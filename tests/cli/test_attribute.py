"""``attribute`` on a tiny random Llama (no downloads): its JSON is core's methods on the ids it
names, each checked against transformers' own run where a test can do it in a line; its text; its
refusals."""

import json

import numpy as np
import pytest

from app.main import main
from core.interp import token_scores as ts
from tests.tiny_models import save_tiny_decoder

pytestmark = pytest.mark.models
torch = pytest.importorskip("torch")
PROMPT = "the cat sat on the mat because the cat"


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    from core import models

    folder = save_tiny_decoder(tmp_path_factory.mktemp("llama"), "llama")
    return folder, models.load_model(folder)


def attribute(folder, *more):
    return ["attribute", "--text", PROMPT, "--model", str(folder), *more]


def test_the_json_scores_every_token_by_every_method(tiny, capsys):
    folder, model = tiny
    assert main([*attribute(folder, "--target", " because", "--foil", " the", "--steps", "4", "--json")]) == 0
    doc = json.loads(capsys.readouterr().out)
    ids = model.tokenizer(PROMPT)["input_ids"]
    assert doc["ids"] == ids and len(doc["tokens"]) == len(ids)
    assert set(doc["methods"]) == set(ts.METHODS) and all(len(v) == len(ids) for v in doc["methods"].values())
    with torch.no_grad():
        out = model.module(input_ids=torch.tensor([ids]), output_attentions=True)
    because, the = (
        model.tokenizer(t, add_special_tokens=False)["input_ids"][0] for t in (" because", " the")
    )
    logits = out.logits[0, -1].double()
    metric = doc["metric"]
    assert metric["kind"] == "logit_difference" and metric["baseline"] == pytest.approx(0.0, abs=1e-5)
    assert metric["value"] == pytest.approx(float(logits[because] - logits[the]), abs=1e-5)
    last = out.attentions[-1][0, :, -1].double().mean(0).numpy()
    np.testing.assert_allclose(doc["methods"]["attention"], last, atol=2e-6)
    answer = ts.Answer(because, the)
    np.testing.assert_allclose(doc["methods"]["occlusion"], ts.occlusion(model, ids, answer), atol=2e-6)
    assert doc["ig"]["steps"] == 4 and doc["ig"]["baseline"] == "zero" and doc["ig"]["rule"] == ts.IG_RULE
    gap = sum(doc["methods"]["ig"]) - doc["metric"]["value"]
    assert doc["ig"]["completeness_gap"] == pytest.approx(gap, abs=1e-4)
    pairs = doc["agreement"]
    assert len(pairs) == 10
    a, b = doc["methods"]["rollout"], doc["methods"]["occlusion"]
    assert pairs["rollout~occlusion"] == ts.spearman(a, b)  # the JSON's own numbers give the same ranks
    core_rollout = ts.rollout(ts.attention_rows(model, ids))
    assert doc["methods"]["rollout"] == [float(v) for v in core_rollout]  # every digit: no ties made
    assert doc["rollout_without_first"][0] == 0
    assert main([*attribute(folder, "--target", " because", "--steps", "4")]) == 0
    assert f"steps from 'zero' ({ts.IG_RULE})" in capsys.readouterr().out


def test_one_method_one_head_and_the_top_token_by_default(tiny, capsys):
    folder, model = tiny
    assert main([*attribute(folder, "--method", "attention", "--layer", "1", "--head", "2", "--json")]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert list(doc["methods"]) == ["attention"] and doc["metric"]["kind"] == "log_prob"
    ids = model.tokenizer(PROMPT)["input_ids"]
    with torch.no_grad():
        out = model.module(input_ids=torch.tensor([ids]), output_attentions=True)
    assert doc["target"] == model.tokenizer.decode([int(out.logits[0, -1].argmax())])
    np.testing.assert_allclose(doc["methods"]["attention"], out.attentions[0][0, 1, -1].numpy(), atol=2e-6)


def test_the_text_is_a_row_per_token(tiny, capsys):
    folder, _ = tiny
    assert main([*attribute(folder, "--target", " because", "--steps", "2", "--baseline", " the")]) == 0
    out = capsys.readouterr().out
    assert "grad×input" in out and "completeness gap" in out and "Spearman ig~occlusion" in out


@pytest.mark.parametrize(
    ("flags", "message"),
    [
        (["--foil", " the"], "give --target too"),
        (["--target", " the", "--foil", " the"], "same token"),
        (["--layer", "3"], "--layer 3 does not exist"),
        (["--baseline", " "], "--baseline is empty"),
        (["--set"], "--set scores its own prompts"),
    ],
)
def test_bad_input_is_one_clear_line(tiny, capsys, flags, message):
    folder, _ = tiny
    assert main([*attribute(folder, *flags)]) == 2
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err


def test_the_set_averages_each_prompts_correlations(tiny, capsys, monkeypatch):
    folder, _ = tiny
    pairs = (("the cat sat on the", " because", " the"), ("the mat because the", " it", " was"))
    monkeypatch.setattr(ts, "AGREEMENT_SET", pairs)
    monkeypatch.setattr(ts.agreement_over, "__defaults__", (pairs, *ts.agreement_over.__defaults__[1:]))
    assert main(["attribute", "--set", "--steps", "2", "--model", str(folder), "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["steps"] == 2 and len(doc["agreement"]) == 10 and doc["ig_rule"] == ts.IG_RULE
    from core import models

    expected = ts.agreement_over(models.load_model(folder), pairs, steps=2)
    assert doc["agreement"]["gradxinput~occlusion"] == pytest.approx(expected.mean[2, 4], abs=1e-12)
    assert [(p["text"], p["target"], p["foil"]) for p in doc["prompts"]] == list(pairs)
    for k, prompt in enumerate(doc["prompts"]):  # each prompt's numbers, the mean recomputable from them
        assert prompt["agreement"]["gradxinput~occlusion"] == pytest.approx(expected.each[k, 2, 4], abs=1e-12)
    mean = np.mean([p["agreement"]["attention~ig"] for p in doc["prompts"]])
    assert doc["agreement"]["attention~ig"] == pytest.approx(mean, abs=1e-12)


def test_pair_explains_two_texts_similarity_in_the_bundled_encoder(capsys):
    from core.interp.similarity import similarity_scores
    from core.models import load_model

    text, pair = "the cat sat on the mat", "a dog lay on the rug"
    assert main(["attribute", "--text", text, "--pair", pair, "--steps", "2", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    expected = similarity_scores(load_model("minilm"), text, pair, steps=2)
    assert doc["model"] == "all-MiniLM-L6-v2" and doc["ids"] == list(expected.ids)
    assert doc["pair"] == {"text": pair, "ids": list(expected.other_ids)}
    assert "every query position" in doc["aggregation"]["attention"] and "rollout" in doc["aggregation"]
    assert doc["metric"]["kind"] == "cosine" and doc["metric"]["value"] == pytest.approx(
        expected.cosine, abs=1e-6
    )
    for name, values in expected.methods.items():
        np.testing.assert_allclose(doc["methods"][name], values, atol=1e-6)
    assert main(["attribute", "--text", text, "--pair", pair, "--steps", "2", "--method", "occlusion"]) == 0
    out = capsys.readouterr().out
    assert "the similarity: the cosine of the two texts' mean vectors" in out and "occlusion" in out
