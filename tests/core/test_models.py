"""Real models: the bundled MiniLM and a tiny random GPT-2 saved to a temp folder (no downloads)."""

import shutil
import subprocess
import sys

import numpy as np
import pytest

from core import models
from core.maths.head_analysis import find_pattern, to_words
from tests.tiny_models import save_tiny_gpt2

pytestmark = pytest.mark.models
torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")

TROPHY = "The trophy didn't fit in the suitcase because it was too big."


@pytest.fixture(scope="module")
def minilm():
    return models.load_model("minilm")


@pytest.fixture(scope="module")
def gpt2_folder(tmp_path_factory):
    return save_tiny_gpt2(tmp_path_factory.mktemp("tiny-gpt2"))


@pytest.fixture(scope="module")
def gpt2(gpt2_folder):
    return models.load_model(gpt2_folder)


def direct_attentions(folder, text, text_b=None) -> np.ndarray:
    """(L, H, T, T) from transformers called directly, eager attention."""
    tok = transformers.AutoTokenizer.from_pretrained(folder, local_files_only=True)
    model = transformers.AutoModel.from_pretrained(
        folder, local_files_only=True, attn_implementation="eager"
    ).eval()
    with torch.no_grad():
        out = model(**tok(text, text_b, return_tensors="pt"), output_attentions=True)
    return torch.stack([a[0] for a in out.attentions]).numpy()


def test_minilm_reproduces_the_article(minilm):
    r = models.run(minilm, TROPHY)
    assert (minilm.n_layers, minilm.n_heads, minilm.is_causal) == (6, 12, False)
    assert r.tokens == (
        "[CLS]", "the", "trophy", "didn", "'", "t", "fit", "in", "the", "suitcase",
        "because", "it", "was", "too", "big", ".", "[SEP]",
    )  # fmt: skip
    assert r.shape == (6, 12, 17, 17) and not r.is_causal
    best = models.find_head(r, "it", "trophy").best
    assert best.label == "layer 4, head 2"
    assert best.score == pytest.approx(0.58, abs=0.005)


def test_minilm_equals_transformers_called_directly(minilm):
    folder, _ = models.resolve("minilm")
    r = models.run(minilm, "A cat sat on the mat.", "It was warm.")
    np.testing.assert_allclose(
        r.attentions, direct_attentions(folder, "A cat sat on the mat.", "It was warm."), atol=1e-6
    )
    np.testing.assert_allclose(r.attentions.sum(axis=-1), 1.0, atol=1e-5)


def test_sentence_pair_segments_and_special_tokens(minilm):
    r = models.run(minilm, "the cat sat", "it slept")
    assert r.tokens == ("[CLS]", "the", "cat", "sat", "[SEP]", "it", "slept", "[SEP]")
    assert r.segment.tolist() == [0, 0, 0, 0, 0, 1, 1, 1]
    assert r.special.tolist() == [True, False, False, False, True, False, False, True]
    assert r.is_pair and r.words == ("the", "cat", "sat", "it", "slept")


def test_word_pieces_and_unusual_scripts(minilm):
    r = models.run(minilm, "unbelievably 👍 日本語 שלום")
    assert r.labels[1:6] == ("un", "##bel", "##ie", "##va", "##bly")
    assert r.words[0] == "unbelievably" and "שלום" in r.words
    assert r.labels[6] == "[UNK]" and not r.special[6]  # the emoji is unknown, not added
    w = to_words(r)
    assert w.tokens[1] == "unbelievably"
    assert np.isfinite(w.attentions).all()


def test_long_input_is_cut_to_the_model_maximum(minilm):
    r = models.run(minilm, "word " * 2000)
    assert minilm.max_tokens == 512 and r.shape[-1] == 512
    assert r.dropped == 2002 - 512  # 2000 words + [CLS] + [SEP]


def test_previous_token_heads_exist_in_minilm(minilm):
    ranking = find_pattern(models.run(minilm, TROPHY), "previous")
    assert ranking.best.score > 0.5  # a real neighbour head, found rather than described


def test_tiny_gpt2_is_causal_and_matches_transformers(gpt2, gpt2_folder):
    text = "the cat sat on the mat because it was warm"
    r = models.run(gpt2, text)
    assert gpt2.is_causal and r.is_causal and (gpt2.n_layers, gpt2.n_heads) == (2, 3)
    np.testing.assert_allclose(r.attentions, direct_attentions(gpt2_folder, text), atol=1e-6)
    assert not np.any(np.triu(r.attentions, k=1))
    assert r.words[:3] == ("the", "cat", "sat") and r.tokens[1].startswith("Ġ")
    assert not any("Ġ" in label for label in r.labels)  # the space marker is not shown
    assert not r.special.any()
    with pytest.raises(ValueError, match="no special tokens"):
        find_pattern(r, "special")


def test_gpt2_refuses_sentence_pairs_and_truncates(gpt2):
    with pytest.raises(ValueError, match="no separator token"):
        models.run(gpt2, "the cat", "the dog")
    r = models.run(gpt2, "the cat " * 100)
    assert r.shape[-1] == 64 and r.dropped == 300 - 64  # 'the', 'Ġca', 't' per repeat


def test_progress_is_reported_and_can_cancel(gpt2_folder):
    seen = []
    models.load_model(gpt2_folder, progress=lambda done, total: seen.append((done, total)))
    assert seen == [(i, 5) for i in range(6)]

    class Cancelled(Exception):
        pass

    def cancel(done, total):
        if done == 2:
            raise Cancelled

    with pytest.raises(Cancelled):
        models.load_model(gpt2_folder, progress=cancel)


@pytest.mark.parametrize("text", ["", "   \n"])
def test_empty_text_is_refused(minilm, text):
    with pytest.raises(ValueError, match="Type some text"):
        models.run(minilm, text)


def test_bad_folders_are_refused_with_a_reason(tmp_path, gpt2_folder):
    with pytest.raises(ValueError, match="is not a folder"):
        models.load_model(tmp_path / "missing")
    with pytest.raises(ValueError, match=r"no config\.json"):
        models.load_model(tmp_path)

    pickled = tmp_path / "pickled"
    pickled.mkdir()
    shutil.copy(gpt2_folder / "config.json", pickled)
    (pickled / "pytorch_model.bin").write_bytes(b"not read")
    with pytest.raises(ValueError, match="only pickled weights"):
        models.load_model(pickled)

    corrupt = tmp_path / "corrupt"
    shutil.copytree(gpt2_folder, corrupt)
    weights = corrupt / "model.safetensors"
    weights.write_bytes(weights.read_bytes()[:200])
    with pytest.raises(ValueError, match="could not be read"):
        models.load_model(corrupt)

    with pytest.raises(ValueError, match=r"only 0\.0 GiB of memory is free"):
        models.load_model(gpt2_folder, memory_limit=1000)


def test_config_without_attention_is_refused(tmp_path, gpt2_folder):
    folder = tmp_path / "resnet"
    shutil.copytree(gpt2_folder, folder)
    (folder / "config.json").write_text('{"model_type": "resnet"}')
    with pytest.raises(ValueError, match="describes no attention layers"):
        models.load_model(folder)


def test_custom_code_is_never_run(tmp_path, gpt2_folder):
    folder = tmp_path / "custom"
    shutil.copytree(gpt2_folder, folder)
    (folder / "config.json").write_text(
        '{"model_type": "mystery", "auto_map": {"AutoConfig": "mystery.MysteryConfig"}}'
    )
    (folder / "mystery.py").write_text("raise SystemExit('custom code ran')\n")
    with pytest.raises(ValueError, match="never run"):
        models.load_model(folder)


def test_missing_libraries_name_the_extra(monkeypatch, gpt2_folder):
    monkeypatch.setitem(sys.modules, "transformers", None)
    with pytest.raises(models.ModelsExtraMissing, match=r"attention-lab\[models\]"):
        models.load_model(gpt2_folder)


def test_importing_core_models_does_not_import_torch():
    code = "import sys, core.models; assert not {'torch', 'transformers'} & set(sys.modules)"
    subprocess.run([sys.executable, "-c", code], check=True)
