"""Shared loaded models: one load per source, the last few kept, a held one never loaded twice."""

import gc
import threading

import pytest

from core import models
from core.models.loaded import LoadedModels
from tests.tiny_models import save_tiny_gpt2, save_tiny_llama
from tests.waits import patience

pytestmark = pytest.mark.models
pytest.importorskip("torch")
pytest.importorskip("transformers")


@pytest.fixture(scope="module")
def folders(tmp_path_factory):
    root = tmp_path_factory.mktemp("tiny")
    return [
        str(save_tiny_gpt2(root / "gpt2")),
        str(save_tiny_llama(root / "llama")),
        str(save_tiny_gpt2(root / "gpt2b", n_head=2)),
    ]


@pytest.fixture
def loads(monkeypatch):
    """Every source load_model was called with, in order."""
    calls = []
    real = models.load_model

    def counted(source, *args, **kwargs):
        calls.append(str(source))
        return real(source, *args, **kwargs)

    monkeypatch.setattr(models, "load_model", counted)
    return calls


def test_a_source_loads_once_and_is_shared(folders, loads):
    cache = LoadedModels()
    assert cache.peek(folders[0]) is None and loads == []
    first = cache.get(folders[0])
    assert cache.get(folders[0]) is first and cache.peek(folders[0]) is first
    assert loads == [folders[0]]


def test_callers_in_several_threads_share_one_load(folders, loads):
    cache = LoadedModels()
    got = []
    threads = [threading.Thread(target=lambda: got.append(cache.get(folders[1]))) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(patience(60))
    assert loads == [folders[1]] and len(got) == 4 and all(m is got[0] for m in got)


def test_the_last_few_stay_and_a_held_one_is_not_loaded_again(folders, loads):
    cache = LoadedModels(keep=1)
    held = cache.get(folders[0])
    cache.get(folders[1])  # folders[0] leaves the kept ones, but it is still held here
    assert cache.get(folders[0]) is held and loads == folders[:2]
    del held
    cache.get(folders[2])  # keeps folders[2] only; folders[0] is held by nobody now
    gc.collect()
    assert cache.peek(folders[0]) is None and cache.peek(folders[1]) is None
    cache.get(folders[0])
    assert loads == [*folders, folders[0]]


def test_the_wrong_kind_is_refused_even_from_memory(folders):
    cache = LoadedModels()
    cache.get("minilm")
    with pytest.raises(ValueError, match="is an encoder"):
        cache.get("minilm", expect=models.DECODER)
    with pytest.raises(ValueError, match="is an encoder"):
        LoadedModels().get("minilm", expect=models.DECODER)


def test_a_cancelled_load_keeps_nothing(folders):
    cache = LoadedModels()

    def cancel(done, total):
        if done == 2:
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        cache.get(folders[0], cancel)
    assert cache.peek(folders[0]) is None
    assert cache.get(folders[0]).n_layers == 2


def test_forget_loads_afresh(folders, loads):
    cache = LoadedModels()
    first = cache.get(folders[0])
    cache.forget(folders[0])
    assert cache.get(folders[0]) is not first and loads == [folders[0], folders[0]]
