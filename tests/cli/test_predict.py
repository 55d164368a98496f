"""``predict`` and ``models`` on a tiny random Llama (no downloads)."""

import json

import numpy as np
import pytest

from app.main import main
from core import decoder, models, sampling
from tests.tiny_models import save_tiny_llama

pytestmark = pytest.mark.models
pytest.importorskip("torch")

PROMPT = "the cat sat on the mat"


@pytest.fixture(scope="module")
def llama(tmp_path_factory):
    return save_tiny_llama(tmp_path_factory.mktemp("tiny-llama"))


def run_json(capsys, *argv):
    assert main([*argv, "--json"]) == 0, capsys.readouterr().err
    return json.loads(capsys.readouterr().out)


def test_predict_json_equals_core(llama, capsys):
    doc = run_json(
        capsys, "predict", "--text", PROMPT, "--model", str(llama), "--top", "4", "--temperature", "0.5"
    )
    model = models.load_model(llama)
    dist = sampling.reshape(decoder.predict(model, PROMPT).logits, temperature=0.5)
    expected, rest = sampling.top(dist, 4)
    assert [t["id"] for t in doc["top"]] == [c.id for c in expected]
    np.testing.assert_allclose([t["prob"] for t in doc["top"]], [c.prob for c in expected], atol=1e-6)
    assert doc["rest"] == pytest.approx(rest, abs=1e-6) and "".join(doc["tokens"]) == PROMPT
    assert doc["settings"] == {"temperature": 0.5, "top_k": None, "top_p": 1.0} and "generated" not in doc


def test_predict_generates_with_a_seed(llama, capsys):
    argv = [
        "predict",
        "--text",
        PROMPT,
        "--model",
        str(llama),
        "--generate",
        "4",
        "--top-k",
        "3",
        "--seed",
        "5",
    ]
    first, again = run_json(capsys, *argv), run_json(capsys, *argv)
    assert first["generated"] == again["generated"] and 1 <= len(first["generated"]) <= 4
    assert [t["kept"] for t in first["top"]] == [True] * 3 + [False] * 7
    assert main(argv) == 0
    text = capsys.readouterr().out
    assert "generated (seed 5):" in text and "(cut)" in text and "tokens (" in text


def test_models_list_names_kind_and_shape(llama, capsys):
    entries = {m["key"]: m for m in run_json(capsys, "models", "list")}
    assert entries["smollm2"]["installed"] is False and entries["smollm2"]["kind"] == "decoder"
    assert (entries["minilm"]["kind"], entries["minilm"]["layers"], entries["minilm"]["heads"]) == (
        "encoder",
        6,
        12,
    )
    assert main(["models", "list"]) == 0
    assert "not added (attention-lab models add smollm2)" in capsys.readouterr().out


@pytest.mark.parametrize(
    "argv", [["models"], ["models", "add"], ["models", "add", "gpt-5"], ["models", "list", "--json=1"]]
)
def test_models_bad_input_is_one_line(argv, capsys):
    try:
        code = main(argv)
    except SystemExit as exc:
        code = exc.code
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2 and len(err) == 1 and ": error: " in err[0]
