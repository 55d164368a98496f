"""SmolLM2 in a standalone build, simulated (sys.frozen, sys._MEIPASS): the full build's bundled
copy is found and loads offline; no standalone build ever starts pip; the lite build says that the
full build includes the model. A tiny random Llama stands in for SmolLM2."""

import json
import shutil
import sys

import pytest

from app.main import main
from core import models
from core.models import fetch, smollm2
from core.models import registry as catalog
from core.user_data import OVERRIDE
from tests.tiny_models import save_tiny_llama

pytestmark = pytest.mark.models
torch = pytest.importorskip("torch")
pytest.importorskip("transformers")


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    return save_tiny_llama(tmp_path_factory.mktemp("tiny-llama"))


@pytest.fixture
def data(tmp_path, monkeypatch):
    monkeypatch.setenv(OVERRIDE, str(tmp_path / "data"))
    return tmp_path / "data"


@pytest.fixture
def no_pip(monkeypatch):
    """Fail the test if anything tries to download the wheel (a frozen app has no pip)."""
    monkeypatch.setattr(smollm2, "_download_wheel", lambda into, alive: pytest.fail("tried to download"))


def standalone(monkeypatch, inside):
    monkeypatch.setattr(sys, "frozen", True, raising=False)
    monkeypatch.setattr(sys, "_MEIPASS", str(inside), raising=False)


def bundle(tiny, inside):
    """``tiny`` placed where a full build keeps SmolLM2, with the receipt an add writes."""
    target = inside / smollm2.BUNDLED_IN / smollm2.NAME
    shutil.copytree(tiny, target)
    receipt = {"package": f"{smollm2.PACKAGE}=={smollm2.VERSION}", "gguf_sha256": smollm2.GGUF_SHA256}
    receipt["weights_sha256"] = fetch.sha256(target / smollm2.WEIGHTS)
    (target / smollm2.RECEIPT).write_text(json.dumps(receipt))
    return target


def test_the_full_build_finds_and_loads_its_bundled_copy(tiny, data, tmp_path, monkeypatch, no_pip):
    inside = tmp_path / "_internal"
    target = bundle(tiny, inside)
    standalone(monkeypatch, inside)
    assert smollm2.installed_folder() == target and smollm2.verified()
    assert smollm2.install() == target  # nothing to add: the build's copy is returned at once
    model = models.load_model(smollm2.KEY, expect=models.DECODER)
    assert model.kind == models.DECODER and model.name == smollm2.NAME
    entry = next(e for e in catalog.known_models() if e.key == smollm2.KEY)
    assert entry.installed and entry.path == str(target) and entry.kind == models.DECODER
    assert not data.exists() or list(data.iterdir()) == []  # the user's data folder is left alone


def test_the_models_command_lists_and_adds_the_bundled_copy(tiny, tmp_path, monkeypatch, no_pip, capsys):
    inside = tmp_path / "_internal"
    target = bundle(tiny, inside)
    standalone(monkeypatch, inside)
    assert main(["models", "list"]) == 0
    line = next(x for x in capsys.readouterr().out.splitlines() if x.startswith(smollm2.KEY))
    assert str(target) in line
    assert main(["models", "add", "smollm2"]) == 0
    out = capsys.readouterr()
    assert out.out.strip() == str(target) and "already added" in out.err


def test_a_standalone_build_without_its_copy_never_starts_pip(data, tmp_path, monkeypatch, no_pip):
    standalone(monkeypatch, tmp_path / "_internal")
    assert smollm2.installed_folder() is None
    with pytest.raises(ValueError, match=r"cannot download or convert.*reinstall the full build") as raised:
        smollm2.install()
    assert "pip" not in str(raised.value)
    with pytest.raises(ValueError, match="reinstall the full build"):
        models.load_model(smollm2.KEY)
    assert list(data.iterdir()) == []


def test_the_lite_build_says_the_full_build_includes_smollm2(data, tmp_path, monkeypatch, no_pip, capsys):
    standalone(monkeypatch, tmp_path / "_internal")
    monkeypatch.setitem(sys.modules, "torch", None)  # the lite build has no torch
    reason = smollm2.cannot_add()
    assert "full build" in reason and "SmolLM2" in reason and "pip" not in reason
    for attempt in (smollm2.install, lambda: models.load_model(smollm2.KEY)):
        with pytest.raises(ValueError) as raised:
            attempt()
        assert str(raised.value) == reason and smollm2.ADD_HINT not in str(raised.value)
    assert main(["models", "add", "smollm2"]) == 2
    assert "full build" in capsys.readouterr().err
    assert main(["models", "list"]) == 0
    listing = capsys.readouterr().out
    assert "models add" not in listing
    assert listing.count("not in this build (the full build includes it)") == 1


def test_a_pip_install_without_torch_names_the_extra(data, monkeypatch, no_pip):
    monkeypatch.setitem(sys.modules, "torch", None)
    with pytest.raises(ValueError, match=r"lacks\. Install the 'models' extra: pip install"):
        smollm2.install()


def test_float16_weights_load_as_float32_with_the_same_values(tiny, tmp_path):
    """SmolLM2 is stored in float16 (half the size); every weight is computed in float32."""
    transformers = pytest.importorskip("transformers")
    half = tmp_path / "half"
    stored = transformers.AutoModelForCausalLM.from_pretrained(tiny).to(torch.float16)
    stored.save_pretrained(half, safe_serialization=True)
    shutil.copy(tiny / "tokenizer.json", half)
    shutil.copy(tiny / "tokenizer_config.json", half)
    loaded = models.load_model(half)
    weights = dict(stored.named_parameters())
    for name, param in loaded.module.named_parameters():
        assert param.dtype == torch.float32, name
        assert torch.equal(param, weights[name].float()), name
