"""The local Hugging Face cache: listed in place, incomplete downloads named, models opened by id."""

import json
import shutil

import pytest

from core import models
from core.models import hf_cache, registry
from tests.tiny_models import save_tiny_decoder

pytestmark = pytest.mark.models


def cache_repo(cache, repo_id, source, drop_blob=()):
    """``source``'s files laid out as the hub caches them: blobs, refs/main and a snapshot of links."""
    repo = cache / ("models--" + repo_id.replace("/", "--"))
    snapshot = repo / "snapshots" / "0123abcd"
    (repo / "blobs").mkdir(parents=True)
    snapshot.mkdir(parents=True)
    (repo / "refs").mkdir()
    (repo / "refs" / "main").write_text("0123abcd")
    for i, path in enumerate(sorted(source.iterdir())):
        blob = repo / "blobs" / f"blob{i}"
        if path.name not in drop_blob:
            shutil.copy(path, blob)
        (snapshot / path.name).symlink_to(blob)
    return snapshot


@pytest.fixture(scope="module")
def tiny_folder(tmp_path_factory):
    return save_tiny_decoder(tmp_path_factory.mktemp("gpt2"), "gpt2")


@pytest.fixture
def cache(tmp_path, tiny_folder, monkeypatch):
    root = tmp_path / "hub"
    cache_repo(root, "org/tiny-gpt2", tiny_folder)
    cache_repo(root, "gpt2", tiny_folder, drop_blob=("model.safetensors",))
    monkeypatch.setenv("HF_HUB_CACHE", str(root))
    return root


def test_the_cache_folder_follows_the_hubs_variables(monkeypatch, tmp_path):
    monkeypatch.delenv("HF_HUB_CACHE", raising=False)
    monkeypatch.setenv("HF_HOME", str(tmp_path / "home"))
    assert hf_cache.cache_folder() == tmp_path / "home" / "hub"
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "c"))
    assert hf_cache.cache_folder() == tmp_path / "c"


def test_complete_and_incomplete_models_are_listed(cache):
    found = {m.repo_id: m for m in hf_cache.cached_models()}
    assert set(found) == {"gpt2", "org/tiny-gpt2"}
    assert found["org/tiny-gpt2"].complete
    assert found["gpt2"].missing == ("model.safetensors (blob missing)",)
    entries = {e.key: e for e in registry.known_models(cache=cache) if e.origin == "cache"}
    tiny = entries["org/tiny-gpt2"]
    assert (tiny.kind, tiny.family, tiny.layers, tiny.heads, tiny.supported) == (
        "decoder",
        "GPT-2",
        2,
        3,
        True,
    )
    assert tiny.size > 0
    assert not entries["gpt2"].supported and entries["gpt2"].missing
    assert json.loads(json.dumps(tiny.as_dict()))["supported"] is True


def test_a_download_cut_short_and_a_missing_config_are_named(cache, tiny_folder):
    (cache / "models--gpt2" / "blobs" / "x.incomplete").write_bytes(b"")
    half = cache_repo(cache, "org/no-config", tiny_folder, drop_blob=("config.json", "tokenizer.json"))
    (half / "config.json").unlink()
    found = {m.repo_id: m for m in hf_cache.cached_models()}
    assert any(".incomplete" in m for m in found["gpt2"].missing)
    assert found["org/no-config"].missing == ("tokenizer.json (blob missing)", "config.json")


def test_a_model_is_opened_by_its_id_and_an_incomplete_one_is_refused(cache):
    model = models.load_model("org/tiny-gpt2")
    assert model.name == "org/tiny-gpt2" and model.family == "GPT-2"
    with pytest.raises(
        ValueError, match=r"gpt2 in the Hugging Face cache is incomplete: missing model\.safetensors"
    ):
        models.load_model("gpt2")
    with pytest.raises(ValueError, match="neither a folder nor a model in the Hugging Face cache"):
        models.load_model("org/absent")


def test_no_cache_lists_nothing(tmp_path):
    assert hf_cache.cached_models(tmp_path / "nowhere") == []
