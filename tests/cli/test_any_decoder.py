"""The commands on a decoder of another family, opened by its id in a Hugging Face cache."""

import json

import pytest

from app.main import main
from core import models
from core.interp import prediction
from tests.core.test_hf_cache import cache_repo
from tests.tiny_models import save_tiny_decoder

pytest.importorskip("torch")
pytestmark = pytest.mark.models


@pytest.fixture(scope="module")
def neox(tmp_path_factory):
    return save_tiny_decoder(tmp_path_factory.mktemp("pythia"), "gpt_neox")


@pytest.fixture
def cache(tmp_path, neox, monkeypatch):
    cache_repo(tmp_path / "hub", "EleutherAI/pythia-tiny", neox)
    cache_repo(tmp_path / "hub", "org/cut-short", neox, drop_blob=("model.safetensors",))
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "hub"))


def test_predict_reads_a_cached_model_by_its_id(cache, capsys):
    assert main(["predict", "--text", "the cat sat", "--model", "EleutherAI/pythia-tiny", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    expected = prediction.predict(models.load_model("EleutherAI/pythia-tiny"), "the cat sat")
    assert doc["model"] == "EleutherAI/pythia-tiny"
    assert doc["top"][0]["id"] == int(expected.logits.argmax())


def test_models_list_shows_the_cache_with_family_and_what_is_missing(cache, capsys):
    assert main(["models", "list", "--json"]) == 0
    entries = {e["key"]: e for e in json.loads(capsys.readouterr().out)}
    pythia = entries["EleutherAI/pythia-tiny"]
    assert (pythia["origin"], pythia["family"], pythia["layers"], pythia["supported"]) == (
        "cache",
        "GPT-NeoX",
        2,
        True,
    )
    assert entries["org/cut-short"]["supported"] is False
    assert main(["models", "list"]) == 0
    text = capsys.readouterr().out
    assert "GPT-NeoX" in text and "incomplete: missing model.safetensors (blob missing)" in text


def test_an_incomplete_cached_model_is_one_line_of_error(cache, capsys):
    assert main(["predict", "--text", "the cat", "--model", "org/cut-short"]) == 2
    err = capsys.readouterr().err.strip().splitlines()[-1]
    assert "incomplete: missing model.safetensors" in err
