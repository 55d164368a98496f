"""Every decoder command reads a prompt to the model's own context, and with ``--context N`` keeps
the first special token and the last tokens and says so in its text and JSON (a tiny Gemma 3 that
reads 1,024 tokens, a 676-token prompt, its first layer's window 4 tokens)."""

import json

import numpy as np
import pytest

from app.main import main
from core.interp import prediction
from tests.tiny_models import LONG_TEXT, save_long_gemma

pytestmark = pytest.mark.models
torch = pytest.importorskip("torch")


@pytest.fixture(scope="module")
def gemma(tmp_path_factory):
    from core import models

    folder = str(save_long_gemma(tmp_path_factory.mktemp("gemma3")))
    return folder, models.load_model(folder)


def note_of(model, n: int) -> str:
    ids = model.tokenizer(LONG_TEXT)["input_ids"]
    return (
        f"The prompt is {len(ids):,} tokens, more than the {n} read here: tokens 2 to {len(ids) - n + 1} were"
    )


def run_json(capsys, *argv):
    assert main([*argv, "--json"]) == 0, capsys.readouterr().err
    return json.loads(capsys.readouterr().out)


def test_predict_reads_the_whole_prompt_and_with_context_says_what_it_cut(gemma, capsys):
    folder, model = gemma
    whole = run_json(capsys, "predict", "--text", LONG_TEXT, "--model", folder)
    ids = model.tokenizer(LONG_TEXT)["input_ids"]
    assert whole["dropped_tokens"] == 0 and len(whole["tokens"]) == len(ids) > 512 and "notes" not in whole
    with torch.no_grad():
        own = torch.softmax(model.module(input_ids=torch.tensor([ids])).logits[0, -1].double(), -1).numpy()
    top = whole["top"][0]
    assert top["id"] == int(np.argmax(own)) and top["prob"] == pytest.approx(own[top["id"]], abs=1e-5)
    cut = run_json(capsys, "predict", "--text", LONG_TEXT, "--model", folder, "--context", "100")
    assert cut["dropped_tokens"] == len(ids) - 100 and cut["tokens"][0] == "<|endoftext|>"
    assert cut["notes"][0].startswith(note_of(model, 100)) and cut["context_limit"] == 100
    assert main(["predict", "--text", LONG_TEXT, "--model", folder, "--context", "100"]) == 0
    out = capsys.readouterr().out
    assert "context: up to 100 tokens here (--context), of the model's 1024" in out
    assert f"note: {note_of(model, 100)}" in out
    assert prediction.context_limit(model) == 1024  # the flag lasts one command


@pytest.mark.parametrize(
    "argv",
    [
        ["stream"],
        ["steer", "--plus", " cat", "--minus", " mat", "--layer", "1", "--strength", "1", "--generate", "2"],
        ["attribute", "--method", "attention"],
        ["explain", "--layer", "1", "--head", "1", "--query", "5", "--key", "2"],
    ],
    ids=lambda argv: argv[0],
)
def test_every_command_that_reads_a_prompt_says_what_it_cut(gemma, capsys, argv):
    folder, model = gemma
    flags = [*argv, "--text", LONG_TEXT, "--model", folder, "--context", "64"]
    doc = run_json(capsys, *flags)
    assert doc["notes"][0].startswith(note_of(model, 64))
    tokens = doc.get("tokens", ["<|endoftext|>"] * 64)  # steer lists none: its note says it
    assert len(tokens) == 64 and tokens[0] == "<|endoftext|>"
    assert main(flags) == 0 and f"note: {note_of(model, 64)}" in capsys.readouterr().out
