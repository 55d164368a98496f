"""One rule for every command that takes a target, a foil, a baseline or a token to follow: text that
is not one token is refused in one line that names its pieces and, where the first is a word, the
one to type; nothing runs on a piece the user did not choose. On a tiny random Llama, where " sat"
is two pieces (' s' + 'at') and " because", " the" are one token each."""

import pytest

from app.main import main
from tests.tiny_models import save_tiny_decoder

pytestmark = pytest.mark.models
pytest.importorskip("torch")

PROMPT = "the cat sat on the mat because the cat"
CORRUPT = "the cat sat in the mat because the cat"
SPLIT = "' sat' is 2 tokens here (' s' + 'at'), not one: type one token."  # ' s' is no word to offer


@pytest.fixture(scope="module")
def folder(tmp_path_factory):
    return str(save_tiny_decoder(tmp_path_factory.mktemp("llama"), "llama"))


def pair(target=" because", foil=" the"):
    return ["--clean", PROMPT, "--corrupt", CORRUPT, "--target", target, "--foil", foil]


ATLAS = ["atlas", "--length", "6", "--answer", PROMPT]
CASES = {  # command line (the model folder added), and the flag named in the refusal
    "predict --target": (["predict", "--text", PROMPT, "--target", "sat"], "--target"),
    "predict --foil": (["predict", "--text", PROMPT, "--target", " the", "--foil", " sat"], "--foil"),
    "patch --target": (["patch", *pair(target="sat")], "Target"),
    "patch --foil": (["patch", *pair(foil="sat")], "Foil"),
    "circuit --target": (["circuit", *pair(target=" sat")], "Target"),
    "circuit --foil": (["circuit", *pair(foil="sat"), "--steps", "2"], "Foil"),
    "attribute --target": (["attribute", "--text", PROMPT, "--target", "sat"], "Target"),
    "attribute --foil": (["attribute", "--text", PROMPT, "--target", " the", "--foil", "sat"], "Foil"),
    "attribute --baseline": (["attribute", "--text", PROMPT, "--baseline", " sat"], "--baseline"),
    "atlas --target": ([*ATLAS, "--target", "sat", "--foil", " the"], "Target"),
    "atlas --foil": ([*ATLAS, "--target", " the", "--foil", "sat"], "Foil"),
    "steer --token": (["steer", "--text", PROMPT, "--plus", " cat", "--minus", " mat", "--layer", "1",
                       "--strength", "1", "--sweep", "0", "1", "--token", "sat"], "--token"),
}  # fmt: skip


@pytest.mark.parametrize("case", CASES)
def test_a_word_of_several_pieces_is_refused_naming_them(folder, capsys, case):
    argv, flag = CASES[case]
    assert main([*argv, "--model", folder]) == 2
    out, err = capsys.readouterr()
    assert out == "" and "Traceback" not in err
    assert err.splitlines()[-1].endswith(f"error: {flag}: {SPLIT}")


def test_one_token_typed_with_or_without_its_space_is_read_as_the_continuing_word(folder, capsys):
    """A word after a prompt that ends without a space starts with one: "because" is " because",
    and the output names the token as read."""
    for typed in ("because", " because"):
        assert main(["predict", "--text", PROMPT, "--target", typed, "--model", folder, "--json"]) == 0
        assert '"target": {"token": " because"' in capsys.readouterr().out
