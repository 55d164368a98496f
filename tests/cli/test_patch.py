"""``patch`` on a tiny random Llama (no downloads): the JSON document against core.interp.patching."""

import json

import numpy as np
import pytest

from app.main import main
from core import models
from core.interp.attribution import attribute
from core.interp.patching import patch, prepare
from tests.tiny_models import save_tiny_llama

pytestmark = pytest.mark.models
pytest.importorskip("torch")

CLEAN = "the cat sat on the mat because the cat"
CORRUPT = "the cat sat in the mat because the cat"
PAIR = ["--clean", CLEAN, "--corrupt", CORRUPT, "--target", "the", "--foil", "because"]


@pytest.fixture(scope="module")
def llama(tmp_path_factory):
    return str(save_tiny_llama(tmp_path_factory.mktemp("tiny-llama")))


def run_json(capsys, *argv):
    assert main(["patch", *PAIR, *argv, "--json"]) == 0, capsys.readouterr().err
    return json.loads(capsys.readouterr().out)


def test_patch_json_equals_core(llama, capsys):
    doc = run_json(capsys, "--model", llama, "--what", "heads", "--direction", "noise")
    model = models.load_model(llama)
    grid = patch(model, prepare(model, CLEAN, CORRUPT, "the", "because"), "heads", "noise")
    assert set(doc) == {
        "model", "clean", "corrupt", "target", "foil", "what", "direction", "approx", "rows", "columns",
        "values", "raw", "tl",
    }  # fmt: skip
    assert doc["what"] == "heads" and doc["direction"] == "noise" and doc["approx"] is False
    assert doc["rows"] == ["layer 1", "layer 2"] and doc["columns"] == ["H1", "H2", "H3", "H4"]
    assert doc["tl"] == {
        "rows": [{"hook": "blocks.0.attn.hook_z", "layer": 0}, {"hook": "blocks.1.attn.hook_z", "layer": 1}],
        "columns": "head",
    }
    assert doc["target"] == " the" and doc["foil"] == " because" and len(doc["clean"]["tokens"]) == 14
    assert doc["clean"]["metric"] == pytest.approx(grid.clean, abs=1e-5)
    assert doc["corrupt"]["metric"] == pytest.approx(grid.corrupt, abs=1e-5)
    np.testing.assert_allclose(doc["raw"], grid.raw, atol=1e-5)
    np.testing.assert_allclose(doc["values"], grid.values, atol=1e-5)


def test_resid_rows_and_columns_and_the_approximation(llama, capsys):
    doc = run_json(capsys, "--model", llama)
    assert doc["rows"] == ["embeddings", "layer 1", "layer 2"]
    hooks = ["blocks.0.hook_resid_pre", "blocks.0.hook_resid_post", "blocks.1.hook_resid_post"]
    assert [row["hook"] for row in doc["tl"]["rows"]] == hooks and doc["tl"]["columns"] == "pos"
    assert doc["columns"][0] == "1 the" and doc["columns"][6] == "7 on/in"
    assert doc["values"][0][6] == pytest.approx(1, abs=1e-5) and doc["values"][-1][-1] == pytest.approx(
        1, abs=1e-5
    )
    approx = run_json(capsys, "--model", llama, "--approx", "--what", "mlp")
    model = models.load_model(llama)
    expected = attribute(model, prepare(model, CLEAN, CORRUPT, "the", "because")).grid("mlp")
    assert approx["approx"] is True and approx["rows"] == ["layer 1", "layer 2"]
    np.testing.assert_allclose(approx["values"], expected.values, atol=1e-5)


def test_patch_prints_a_table(llama, capsys):
    assert main(["patch", *PAIR, "--model", llama, "--what", "attn", "--target", "it"]) == 0
    out = capsys.readouterr().out
    assert "logit ␣it − logit ␣because" in out and "attention outputs, denoise (patched runs)" in out
    assert "layer 2 " in out and "7 on/in" in out
