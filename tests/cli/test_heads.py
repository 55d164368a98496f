"""``attention-lab heads``: text and JSON output, 1-based numbering, one-line errors."""

import json

import numpy as np
import pytest

from app.commands.heads import PATTERNS
from app.main import main
from core import models
from tests.cli.running import stages
from tests.tiny_models import save_tiny_gpt2

pytestmark = pytest.mark.models
pytest.importorskip("torch")
pytest.importorskip("transformers")

TROPHY = "The trophy didn't fit in the suitcase because it was too big."


@pytest.fixture(scope="module")
def minilm():
    return models.load_model("minilm")


@pytest.fixture(autouse=True)
def load_minilm_once(minilm, monkeypatch):
    """Each command loads its model; here the bundled one is loaded once for the whole module."""
    real = models.load_model
    monkeypatch.setattr(
        models,
        "load_model",
        lambda source, **kw: minilm if source == "minilm" and not kw.get("expect") else real(source, **kw),
    )


def heads(capsys, *args):
    code = main(["heads", *args])
    out = capsys.readouterr()
    return code, out.out, out.err


def test_find_prints_the_articles_head(capsys):
    code, out, err = heads(capsys, "--text", TROPHY, "--find", "it", "trophy")
    assert code == 0
    # Stage lines on stderr, also when it is not a terminal; nothing from the libraries.
    assert stages(err) == ["loading the model minilm…", "running all-MiniLM-L6-v2…"]
    assert "tokens (17): [CLS] the trophy didn ' t fit" in out
    assert "it → trophy: layer 4, head 2: 0.58" in out
    assert "then layer 5, head 4: 0.41" in out


def test_json_document(capsys):
    code, out, _ = heads(
        capsys, "--text", TROPHY, "--layer", "4", "--head", "2", "--find", "it", "trophy", "--json"
    )
    doc = json.loads(out)
    assert code == 0 and doc["shape"] == [6, 12, 17, 17] and doc["tokens"][11] == "it"
    weights = np.array(doc["weights"])
    assert weights.shape == (17, 17) and doc["layer"] == 4 and doc["head"] == 2
    assert doc["tl"] == {"hook": "blocks.3.attn.hook_pattern", "layer": 3, "head": 1}
    np.testing.assert_allclose(weights.sum(axis=1), 1.0, atol=1e-5)
    find = doc["find"]
    assert (find["layer"], find["head"]) == (4, 2) and find["weight"] == pytest.approx(0.58, abs=0.005)
    assert find["weight"] == pytest.approx(weights[11, 2], abs=1e-6)
    assert len(find["ranking"]) == 72 and find["ranking"][0]["weight"] == find["weight"]


def test_sentence_pair_and_words(capsys):
    code, out, _ = heads(capsys, "--text", "unbelievably good", "--text-b", "yes", "--words", "--json")
    doc = json.loads(out)
    assert code == 0 and doc["tokens"] == ["[CLS]", "unbelievably", "good", "[SEP]", "yes", "[SEP]"]


def test_local_decoder_folder(capsys, tmp_path):
    folder = save_tiny_gpt2(tmp_path / "gpt2")
    code, out, _ = heads(capsys, "--text", "the cat sat", "--model", str(folder), "--json")
    doc = json.loads(out)
    assert code == 0 and doc["is_causal"] and doc["shape"][:2] == [2, 3]


@pytest.mark.parametrize(
    "args, message",
    [
        (["--text", ""], "Type some text"),
        (["--text", "the cat", "--find", "cat", "dog"], "'dog' is not one of the tokens"),
        (["--text", "the cat", "--layer", "7", "--head", "1"], "layers 1…6 and heads 1…12"),
        (["--text", "the cat", "--layer", "2"], "--layer and --head together"),
        (["--text", "the cat", "--model", "/nonexistent/model"], "is not a folder"),
    ],
)
def test_bad_input_is_one_line_and_exit_2(capsys, args, message):
    code, out, err = heads(capsys, *args)
    assert code == 2 and out == ""
    *stages, refusal = err.strip().splitlines()  # progress stages ("loading the model…") may come first
    assert all(s.endswith("…") for s in stages) and message in refusal


@pytest.mark.parametrize("pattern", ["previous", "sink"])
def test_pattern_rankings_match_the_scores(capsys, minilm, pattern):
    from core.interp.sinks import sink_scores
    from core.maths.head_analysis import previous_token

    code, out, _ = heads(capsys, "--text", TROPHY, "--pattern", pattern, "--json")
    doc = json.loads(out)["pattern"]
    result = models.run(minilm, TROPHY)
    scores = previous_token(result) if pattern == "previous" else sink_scores(result.attentions)
    assert code == 0 and doc["name"] == pattern and len(doc["ranking"]) == 72
    layer, head = np.unravel_index(np.argmax(scores), scores.shape)
    assert (doc["layer"], doc["head"]) == (layer + 1, head + 1)  # counted from 1
    assert doc["score"] == pytest.approx(scores.max(), abs=1e-6)
    code, out, _ = heads(capsys, "--text", TROPHY, "--pattern", pattern)
    title = "previous-token score" if pattern == "previous" else "weight on the first token"
    assert f"{title}: layer {layer + 1}, head {head + 1}: {scores.max():.2f}" in out


def test_induction_needs_a_decoder_and_no_text(capsys):
    code, _, err = heads(capsys, "--pattern", "induction")
    assert code == 2 and "all-MiniLM-L6-v2 is an encoder" in err
    code, _, err = heads(capsys, "--pattern", "induction", "--text", TROPHY, "--words")
    assert code == 2 and "leave out --text, --words" in err
    code, _, err = heads(capsys)
    assert code == 2 and "give --text" in err


@pytest.mark.parametrize("pattern", ["previous", "sink"])
def test_patterns_read_the_default_sentence_without_text(capsys, tmp_path, pattern):
    from core.models.attention_run import TROPHY as DEFAULT_TEXT

    code, out, err = heads(capsys, "--pattern", pattern, "--json")
    assert code == 0, err
    doc = json.loads(out)
    assert doc["tokens"] == list(models.run(models.load_model("minilm"), DEFAULT_TEXT).labels)
    assert doc["pattern"]["name"] == pattern
    decoder = save_tiny_gpt2(tmp_path / "gpt2")  # as for --model smollm2: a decoder
    code, out, err = heads(capsys, "--model", str(decoder), "--pattern", pattern)
    assert code == 0, err
    assert "tokens (" in out and PATTERNS[pattern] in out


def test_a_long_text_is_echoed_by_its_ends(capsys):
    words = " ".join(f"w{i}" for i in range(2000))  # far past MiniLM's 512 tokens
    code, out, _ = heads(capsys, "--text", words)
    assert code == 0
    line = next(line for line in out.splitlines() if line.startswith("tokens ("))
    assert line.startswith("tokens (512): [CLS] w ##0 w ##1") and " … (488 tokens) … " in line
    assert len(line) < 200 and line.endswith("[SEP]")
    code, out, _ = heads(capsys, "--text", TROPHY)
    assert "tokens (17): [CLS] the trophy didn ' t fit in the suitcase because it was too big . [SEP]" in out


def test_a_folder_that_is_no_model_is_named_as_given(capsys, tmp_path, monkeypatch):
    (tmp_path / "models" / "empty").mkdir(parents=True)
    monkeypatch.chdir(tmp_path)
    for given in ("models/empty", str(tmp_path / "models" / "empty")):
        code, _, err = heads(capsys, "--text", "the cat", "--model", given)
        assert code == 2 and f"'{given}' is not a model folder" in err
