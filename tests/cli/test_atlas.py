"""``atlas`` on a tiny random Llama (no downloads): its JSON against transformers' own weights on the
ids it names, its cloud, its text and its refusals."""

import json

import numpy as np
import pytest

from app.main import main
from core.interp import atlas
from tests.tiny_models import save_tiny_decoder

pytestmark = pytest.mark.models
torch = pytest.importorskip("torch")


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    from core import models

    folder = save_tiny_decoder(tmp_path_factory.mktemp("llama"), "llama")
    return folder, models.load_model(folder)


@pytest.fixture
def low_ids(monkeypatch):
    monkeypatch.setattr(atlas, "LOW", 20)  # the tiny vocabulary has 300 tokens


def test_the_json_scores_the_heads_on_the_ids_it_names(tiny, low_ids, capsys):
    folder, model = tiny
    code = main(["atlas", "--model", str(folder), "--length", "6", "--seed", "4", "--qk", "2", "1", "--json"])
    assert code == 0, capsys.readouterr().err
    doc = json.loads(capsys.readouterr().out)
    assert (doc["layers"], doc["heads"]) == (model.n_layers, model.n_heads)
    assert set(doc["scores"]) == set(atlas.SCORES)
    ids = doc["repeat_ids"]
    assert len(ids) == 13 and ids[1:7] == ids[7:] and min(ids[1:]) >= 20
    with torch.no_grad():
        weights = model.module(input_ids=torch.tensor([ids]), output_attentions=True).attentions
    grid = np.array([[float(np.mean([a[0, h, t, t - 5] for t in range(7, 13)])) for h in range(model.n_heads)]
                     for a in weights])  # fmt: skip
    np.testing.assert_allclose(doc["scores"]["induction"], grid, atol=2e-6)
    whole = model.tokenizer(atlas.NATURAL)["input_ids"]  # longer than the tiny model reads: its end
    assert doc["text_ids"] == whole[-len(doc["text_ids"]) :] and len(doc["text_ids"]) == model.max_tokens
    points = doc["qk"]["points"]
    assert len(points) == 2 * (len(doc["text_ids"]) + len(ids))  # a query and a key per token
    assert {p["kind"] for p in points} == {"query", "key"} and doc["qk"]["layer"] == 2


def test_the_text_names_the_highest_heads_of_each_score(tiny, low_ids, capsys):
    folder, _ = tiny
    assert main(["atlas", "--model", str(folder), "--length", "6", "--text", "the cat sat on the mat"]) == 0
    out = capsys.readouterr().out
    assert "induction" in out and "copying" in out and "L1 H" in out


@pytest.mark.parametrize(
    ("flags", "message"),
    [
        (["--length", "6"], "too few to draw"),  # ids from 1000 up
        (["--length", "6", "--qk", "3", "1"], "--qk 3 1 does not exist"),
        (["--text", "  "], "--text is empty"),
    ],
)
def test_bad_input_is_one_clear_line(tiny, capsys, flags, message):
    folder, _ = tiny
    assert main(["atlas", "--model", str(folder), *flags]) == 2
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err


def test_the_direct_shares_are_core_s_for_the_answer(tiny, low_ids, capsys):
    from core.interp import head as inside

    folder, model = tiny
    answer = "the cat sat on the mat because the cat"
    flags = ["--answer", answer, "--target", " because", "--foil", " the", "--length", "6", "--json"]
    assert main(["atlas", "--model", str(folder), *flags]) == 0, capsys.readouterr().err
    doc = json.loads(capsys.readouterr().out)["direct"]
    ids = model.tokenizer(answer)["input_ids"]
    ends = [model.tokenizer(t, add_special_tokens=False)["input_ids"][0] for t in (" because", " the")]
    expected = inside.direct_shares(inside.record(model, tuple(ids)), *ends).heads
    np.testing.assert_allclose(doc["shares"], expected, atol=2e-6)
    assert (doc["target"], doc["foil"]) == (" because", " the")
    flags[flags.index("--target") + 1] = "because"  # typed without its space: read with it, and said so
    assert main(["atlas", "--model", str(folder), *flags[:-1]]) == 0
    assert "direct share of logit(' because') − logit(' the') (largest in size)" in capsys.readouterr().out
    flags[flags.index("--answer") + 1] = " "
    assert main(["atlas", "--model", str(folder), *flags]) == 2
    assert "--answer is empty; give the text the target and foil continue" in capsys.readouterr().err


def test_an_encoder_gets_the_scores_that_apply_and_says_why_not_the_others(capsys):
    from core.models import load_model

    assert main(["atlas", "--model", "minilm", "--length", "6", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert set(doc["scores"]) == {"previous_token", "first_token", "self"}
    assert doc["not_applicable"] == atlas.NOT_FOR_ENCODERS
    expected = atlas.head_atlas(load_model("minilm"), atlas.NATURAL, 6).scores["first_token"]
    np.testing.assert_allclose(doc["scores"]["first_token"], expected, atol=1e-6)
    assert main(["atlas", "--model", "minilm", "--length", "6"]) == 0
    assert "induction        does not apply: an encoder predicts no next token" in capsys.readouterr().out
    assert main(["atlas", "--model", "minilm", "--target", "a", "--foil", "b"]) == 2
    assert (
        capsys.readouterr()
        .err.strip()
        .endswith("--target and --foil need a decoder: all-MiniLM-L6-v2 is an encoder, with no logits")
    )
