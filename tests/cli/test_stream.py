"""``stream`` on tiny random decoders (no downloads): its JSON against the family's own modules read
by hooks written here, its text, and bad input."""

import json

import numpy as np
import pytest

from app.main import main
from tests.core.test_stream import written_by_hand
from tests.tiny_models import save_tiny_decoder

pytestmark = pytest.mark.models
torch = pytest.importorskip("torch")

PROMPT = "the cat sat on the mat because the cat"


@pytest.fixture(scope="module", params=["llama", "gemma3_text", "gpt2"])
def tiny(request, tmp_path_factory):
    from core import models

    folder = save_tiny_decoder(tmp_path_factory.mktemp(request.param), request.param)
    return folder, request.param, models.load_model(folder)


def stream(folder, *more):
    return ["stream", "--text", PROMPT, "--model", str(folder), *more]


def test_the_json_is_the_streams_real_sizes_and_its_parts_add_up(tiny, capsys):
    folder, model_type, model = tiny
    assert main([*stream(folder, "--position", "3"), "--json"]) == 0, capsys.readouterr().err
    doc = json.loads(capsys.readouterr().out)
    ids = model.tokenizer(PROMPT)["input_ids"]
    attn, mlp, first, last = written_by_hand(model.module, model_type, ids)
    assert doc["position"] == 3 and len(doc["tokens"]) == len(ids) and len(doc["layers"]) == model.n_layers
    one = doc["layers"][0]
    fields = {"layer", "tl", "norm_in", "norm_out", "attn_norm", "mlp_norm", "cos_final", "lens_top"}
    assert set(one) == fields
    assert one["layer"] == 1 and one["norm_in"] == pytest.approx(float(np.linalg.norm(first[3])), rel=1e-5)
    assert one["attn_norm"] == pytest.approx(float(np.linalg.norm(attn[0][3])), rel=1e-5)
    assert one["mlp_norm"] == pytest.approx(float(np.linalg.norm(mlp[0][3])), rel=1e-5)
    assert doc["layers"][-1]["norm_out"] == pytest.approx(float(np.linalg.norm(last[3])), rel=1e-5)
    assert doc["layers"][-1]["cos_final"] == pytest.approx(1.0, abs=1e-6)
    assert [p["name"] for p in doc["parts"][:3]] == ["embeddings", "L1 attn", "L1 MLP"]
    hooks = [
        "blocks.0.hook_resid_pre",
        "blocks.0.hook_attn_out",
        "blocks.0.hook_mlp_out",
        "blocks.1.hook_attn_out",
    ]
    assert [p["tl"]["hook"] for p in doc["parts"][:4]] == hooks
    assert one["tl"] == {"hook": "blocks.0.hook_resid_post", "layer": 0}
    assert doc["parts"][1]["norm"] == one["attn_norm"]
    assert doc["sum_error"] <= 1e-4 * np.abs(last[3]).max()
    with torch.no_grad():
        logits = model.module(input_ids=torch.tensor([ids])).logits[0, 3].double().numpy()
    best = np.argsort(-logits)[:5]
    assert doc["top"] == [model.tokenizer.decode([int(t)]) for t in best]
    total = np.sum([p["direct"] for p in doc["parts"]], axis=0) + doc["biases_direct"]
    cap = getattr(model.module.config, "final_logit_softcapping", None)
    np.testing.assert_allclose(np.tanh(total / cap) * cap if cap else total, logits[best], atol=1e-4)


def test_the_text_has_a_row_per_layer_and_checks_the_sum(tiny, capsys):
    folder, _, model = tiny
    assert main(stream(folder)) == 0
    out = capsys.readouterr().out
    assert "the stream of token" in out
    assert out.count("\n") >= model.n_layers + 5 and "every attention and MLP output" in out


def test_the_final_norm_written_out_gives_the_models_logits(tiny, capsys):
    folder, model_type, model = tiny
    assert main([*stream(folder, "--norm", "final", "--position", "3"), "--json"]) == 0
    norm = json.loads(capsys.readouterr().out)["norm"]
    ids = model.tokenizer(PROMPT)["input_ids"]
    *_, last = written_by_hand(model.module, model_type, ids)
    with torch.no_grad():
        logits = model.module(input_ids=torch.tensor([ids])).logits[0, 3].double().numpy()
    best = np.argsort(-logits)[:5]
    assert norm["layer"] == "final" and [q["token"] for q in norm["top"]] == [
        model.tokenizer.decode([int(t)]) for t in best
    ]
    np.testing.assert_allclose([q["logit"] for q in norm["top"]], logits[best], atol=1e-5)
    centred = last[3] - last[3].mean() if model_type == "gpt2" else last[3]
    assert norm["mean_square"] == pytest.approx(float((centred**2).mean()), rel=1e-5)
    assert norm["module_error"] < 1e-4 and norm["scaled_change"] < 1e-3
    assert main(stream(folder, "--norm", "2")) == 0
    assert "the norm layer 2 reads through" in capsys.readouterr().out


@pytest.mark.parametrize(
    "more, message",
    [
        (("--position", "99"), "--position 99 does not exist: the text has tokens 0 to"),
        (("--position", "-1"), "--position -1 does not exist"),
        (("--norm", "9"), "--norm 9 does not exist"),
    ],
)
def test_bad_input_is_one_line_and_exit_2(tiny, capsys, more, message):
    folder, _, _ = tiny
    assert main(stream(folder, *more)) == 2
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err


def test_an_empty_text_is_refused(tiny, capsys):
    folder, _, _ = tiny
    assert main(["stream", "--text", "  ", "--model", str(folder)]) == 2
    assert "--text is empty" in capsys.readouterr().err
