"""``steer`` on tiny random decoders (no downloads): its JSON against generation by hand with a hook
written here, its text, and bad input."""

import json

import pytest

from app.main import main
from tests.core.test_steering import generated_by_hand, stream_by_hand
from tests.tiny_models import save_tiny_decoder

pytestmark = pytest.mark.models
torch = pytest.importorskip("torch")

PROMPT = "the cat sat on the"


@pytest.fixture(scope="module", params=["llama", "gpt_neox"])
def tiny(request, tmp_path_factory):
    from core import models

    folder = save_tiny_decoder(tmp_path_factory.mktemp(request.param), request.param)
    return folder, request.param, models.load_model(folder)


def steer(folder, *more, strength="8"):
    return ["steer", "--text", PROMPT, "--plus", " cat", "--minus", " mat", "--layer", "1",
            "--strength", strength, "--prefix", "the dog saw", "--generate", "5", "--model", str(folder),
            *more]  # fmt: skip


def test_the_json_holds_both_completions_and_the_vectors_size(tiny, capsys):
    folder, model_type, model = tiny
    assert main([*steer(folder), "--json"]) == 0, capsys.readouterr().err
    doc = json.loads(capsys.readouterr().out)
    module, ids = model.module, model.tokenizer(PROMPT)["input_ids"]
    ends = [stream_by_hand(module, model_type, model.tokenizer(t)["input_ids"], 0)[-1]
            for t in ("the dog saw cat", "the dog saw mat")]  # fmt: skip
    vector = ends[0] - ends[1]
    assert doc["layer"] == 1 and doc["strength"] == 8 and doc["mode"] == "add"
    assert doc["vector_norm"] == pytest.approx(float(vector.norm()), rel=1e-5)
    assert doc["normal"]["ids"] == list(generated_by_hand(module, model_type, ids, 5))
    assert doc["steered"]["ids"] == list(
        generated_by_hand(module, model_type, ids, 5, lambda h: h + 8 * vector)
    )
    assert doc["steered"]["text"] == model.tokenizer.decode(doc["steered"]["ids"])
    assert not any("finite" in n for n in doc.get("notes", ()))  # no overflow
    assert main([*steer(folder, strength="0"), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["steered"] == doc["normal"]  # strength 0: the normal text


def test_the_text_shows_both_completions_and_an_overflow_is_a_note(tiny, capsys):
    folder, _, _ = tiny
    assert main(steer(folder)) == 0
    out = capsys.readouterr().out
    assert "normal:  the cat sat on the" in out and "steered: the cat sat on the" in out
    assert main(steer(folder, strength="1e300")) == 0
    assert "note: The steered logits stopped being finite numbers" in capsys.readouterr().out


@pytest.mark.parametrize(
    "change, message",
    [
        (("--layer", "9"), "--layer 9 does not exist"),
        (("--minus", " cat"), "--plus and --minus are the same text"),
        (("--text", " "), "--text is empty"),
        (("--strength", "nan"), "not a finite number"),
        (("--plus", " "), "Give two texts"),
    ],
)
def test_bad_input_is_one_line_and_exit_2(tiny, capsys, change, message):
    folder, _, _ = tiny
    argv = steer(folder)
    argv[argv.index(change[0]) + 1] = change[1]
    try:
        code = main(argv)
    except SystemExit as exc:  # refused by the argument parser
        code = exc.code
    assert code == 2
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err


def test_a_sweep_follows_the_next_token_from_no_steering_to_the_strength_given(tiny, capsys):
    folder, _, model = tiny
    assert main([*steer(folder), "--sweep", "0", "8", "--json"]) == 0, capsys.readouterr().err
    doc = json.loads(capsys.readouterr().out)
    points, decode = doc["sweep"]["points"], model.tokenizer.decode
    assert len(points) == 21 and points[0]["strength"] == 0 and points[-1]["strength"] == 8
    assert doc["sweep"]["token"] == decode(doc["normal"]["ids"][:1])  # by default the normal first token
    assert points[0]["top"] == decode(doc["normal"]["ids"][:1]) and points[0]["prob"] > 0
    assert points[-1]["top"] == decode(doc["steered"]["ids"][:1])  # strength 8, as --strength
    assert all(p["entropy"] >= 0 and 0 <= p["prob"] <= 1 for p in points)
    assert main([*steer(folder), "--sweep", "0", "8"]) == 0
    assert "the next token by strength:" in capsys.readouterr().out


def test_a_word_after_the_prefix_gets_its_space_and_is_printed_as_read(tiny, capsys):
    """A word typed after the prefix gets its space ("love" reads "I talk about love", as " love"
    does); punctuation is joined as typed; the line says exactly what was run."""
    folder, model_type, model = tiny
    argv = steer(folder)
    argv[argv.index("--plus") + 1] = "cat"  # typed without its space
    assert main([*argv, "--json"]) == 0, capsys.readouterr().err
    doc = json.loads(capsys.readouterr().out)
    assert doc["read"] == {"plus": "the dog saw cat", "minus": "the dog saw mat"}
    end = stream_by_hand(model.module, model_type, model.tokenizer("the dog saw cat")["input_ids"], 0)[-1]
    other = stream_by_hand(model.module, model_type, model.tokenizer("the dog saw mat")["input_ids"], 0)[-1]
    assert doc["vector_norm"] == pytest.approx(float((end - other).norm()), rel=1e-5)
    assert main(argv) == 0
    assert "vector: 'the dog saw cat' − 'the dog saw mat' at their last tokens" in capsys.readouterr().out
    argv[argv.index("--plus") + 1] = ", cat"
    assert main([*argv, "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["read"]["plus"] == "the dog saw, cat"


def test_a_huge_strength_is_said_and_an_overflowed_sweep_row_names_no_token(tiny, capsys):
    folder, _, _ = tiny
    assert main([*steer(folder, strength="1e9"), "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    ratio = 1e9 * doc["vector_norm"] / doc["stream_norm"]
    assert any(f"{ratio:.3g} times the size of the streams there" in n for n in doc["notes"])
    assert main([*steer(folder, strength="0.5"), "--json"]) == 0
    assert "notes" not in json.loads(capsys.readouterr().out)  # half the vector: no word needed
    assert main([*steer(folder), "--sweep", "0", "1e300", "--json"]) == 0
    points = json.loads(capsys.readouterr().out)["sweep"]["points"]
    assert points[0]["top"] is not None and points[-1]["top"] is None  # 1e300 × the vector overflows
    assert main([*steer(folder), "--sweep", "0", "1e300"]) == 0
    assert "none (the logits overflowed)" in capsys.readouterr().out
