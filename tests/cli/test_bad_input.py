"""Every flag of every subcommand, given bad values: exit code 2, one line on stderr, no traceback.

The table is checked against the parser, so a new flag without a bad-input case fails here.
Bench cases run on a tiny sweep, so a value that is wrongly accepted costs a moment, not minutes.
Model folders that are not models (empty, a file, pickled weights only, cut-off safetensors, a
config that does not match its weights, a huge vocabulary) are refused before anything runs.
"""

from __future__ import annotations

import argparse
import json
import shutil

import pytest

from app.commands.progress import HEARTBEAT_LINE
from app.main import build_parser, main
from core import models

TINY_BENCH = {"--lengths": "8", "--impl": "numpy-naive", "--repeats": "1"}

# (subcommand or None for the top level, flag): argument lists that must be refused
CASES: dict[tuple[str | None, str], list[list[str]]] = {
    (None, "--panel"): [["--panel", "nope"], ["--panel", ""], ["--panel"]],
    ("smoke", "--screenshots"): [["--screenshots", "{file}"], ["--screenshots"]],
    ("smoke", "--panel"): [["--panel", "nope"], ["--panel", ""], ["--panel", "QKV"], ["--panel"]],
    ("bench", "--device"): [["--device", "gpu"], ["--device", ""], ["--device"]],
    ("bench", "--impl"): [["--impl", "nope"], ["--impl", "numpy-naive", "nope"], ["--impl"]],
    ("bench", "--lengths"): [
        ["--lengths", "0"],
        ["--lengths", "-8"],
        ["--lengths", "abc"],
        ["--lengths", "1.5"],
        ["--lengths", "64:8"],
        ["--lengths", ""],
        ["--lengths", "²"],
        ["--lengths", "9" * 5000],
        ["--lengths", "99999999999999999999"],
        ["--lengths", "8:99999999999999999999"],
        ["--lengths"],
    ],
    ("bench", "--dtype"): [["--dtype", "fp8"], ["--dtype", ""], ["--dtype"]],
    ("bench", "--causal"): [["--causal=yes"]],
    ("bench", "--batch"): [
        ["--batch", "0"],
        ["--batch", "-1"],
        ["--batch", "x"],
        ["--batch", "1.5"],
        ["--batch", "99999999999999999999"],
    ],
    ("bench", "--heads"): [["--heads", "0"], ["--heads", "two"], ["--heads"]],
    ("bench", "--head-dim"): [
        ["--head-dim", "0"],
        ["--head-dim", "1e3"],
        ["--head-dim", "-0"],
        ["--head-dim"],
    ],
    ("bench", "--window"): [["--window", "0"], ["--window", "-3"], ["--window", "∞"]],
    ("bench", "--repeats"): [["--repeats", "0"], ["--repeats", "many"], ["--repeats"]],
    ("bench", "--seed"): [
        ["--seed", "-1"],
        ["--seed", "0x10"],
        ["--seed", "99999999999999999999"],
        ["--seed"],
    ],
    ("bench", "--json"): [["--json", "{missing}/out.json"], ["--json", "{folder}"], ["--json"]],
    ("bench", "--csv"): [["--csv", "{missing}/out.csv"], ["--csv", "{folder}"], ["--csv"]],
}
TEXT = ["--text", "the cat sat"]
CASES.update(
    {
        ("heads", "--text"): [["--text", ""], ["--text", " \t "], ["--text"], []],
        ("heads", "--text-b"): [["--text-b", ""], ["--text-b"]],
        ("heads", "--model"): [
            ["--model", "{missing}"],
            ["--model", "{folder}"],
            ["--model", "{file}"],
            ["--model", ""],
            ["--model", "{pickled}"],
            ["--model", "{truncated}"],
            ["--model", "{lying}"],
            ["--model", "{huge_vocab}"],
            ["--model"],
        ],
        ("heads", "--layer"): [
            ["--layer", "0", "--head", "1"],
            ["--layer", "99", "--head", "1"],
            ["--layer", "x"],
            ["--layer", "99999999999999999999", "--head", "1"],
        ],
        ("heads", "--head"): [
            ["--layer", "1", "--head", "0"],
            ["--head", "1"],
            ["--layer", "1", "--head", "-1"],
        ],
        ("heads", "--find"): [["--find", "cat"], ["--find", "cat", "dog"], ["--find", "", "cat"]],
        ("heads", "--pattern"): [
            ["--pattern", "nope"],
            ["--pattern"],
            ["--pattern", "induction"],  # with --text, and MiniLM is no decoder
        ],
        ("heads", "--words"): [["--words=yes"]],
        ("heads", "--json"): [["--json=1"]],
        ("predict", "--text"): [["--text", ""], ["--text", " \t "], ["--text"], []],
        ("predict", "--model"): [
            ["--model", "{missing}"],
            ["--model", "{folder}"],
            ["--model", "{file}"],
            ["--model", ""],
            ["--model", "minilm"],
            ["--model", "smollm2"],  # not added in the test data folder
            ["--model", "{pickled}"],
            ["--model", "{truncated}"],
            ["--model"],
        ],
        ("predict", "--top"): [
            ["--top", "0"],
            ["--top", "-2"],
            ["--top", "x"],
            ["--top", "99999999999999999999"],
            ["--top"],
        ],
        ("predict", "--temperature"): [
            ["--temperature", "0"],
            ["--temperature", "-1"],
            ["--temperature", "nan"],
            ["--temperature", "inf"],
            ["--temperature", "hot"],
        ],
        ("predict", "--top-p"): [["--top-p", "0"], ["--top-p", "1.5"], ["--top-p", "-0.1"], ["--top-p", "x"]],
        ("predict", "--top-k"): [
            ["--top-k", "0"],
            ["--top-k", "-1"],
            ["--top-k", "2.5"],
            ["--top-k", "99999999999999999999"],
        ],
        ("predict", "--seed"): [["--seed", "-1"], ["--seed", "x"], ["--seed", "99999999999999999999"]],
        ("predict", "--generate"): [
            ["--generate", "0"],
            ["--generate", "-3"],
            ["--generate", "many"],
            ["--generate", "99999999999999999999"],
        ],
        ("predict", "--json"): [["--json=1"]],
        ("predict", "--ablate"): [
            ["--ablate", "0.1"],  # counted from 1
            ["--ablate", "3.1"],  # the tiny Llama has 2 layers
            ["--ablate", "1.5"],  # … of 4 heads
            ["--ablate", "1"],
            ["--ablate", "x.y"],
            ["--ablate"],
        ],
        ("predict", "--ablation"): [["--ablation", "half"], ["--ablation", "mean"], ["--ablation"]],
        # the second without --ablate
        ("predict", "--ablate-first"): [["--ablate-first=1"], ["--ablate-first"]],
        ("predict", "--target"): [["--target", ""], ["--target", "  "], ["--target"]],
        ("predict", "--foil"): [["--foil", "cat"], ["--target", "the", "--foil", "the"], ["--foil"]],
        ("predict", "--logit-lens"): [["--logit-lens=1"]],
        # without --foil, without --target
        ("predict", "--direct"): [["--direct=1"], ["--target", "the", "--direct"], ["--direct"]],
    }
)
EXPLAIN = ["--layer", "1", "--head", "1", "--query", "3", "--key", "1"]  # given before each case
CASES.update(
    {
        ("explain", "--text"): [["--text", ""], ["--text", " \t "], ["--text"], []],
        ("explain", "--model"): [["--model", "{missing}"], ["--model", "{folder}"], ["--model", ""]],
        ("explain", "--layer"): [["--layer", "0"], ["--layer", "3"], ["--layer", "x"], ["--layer"]],
        ("explain", "--head"): [["--head", "0"], ["--head", "5"], ["--head", "-1"], ["--head"]],
        ("explain", "--query"): [["--query", "0"], ["--query", "99"], ["--query", "zebra"], ["--query", ""]],
        ("explain", "--key"): [["--key", "6"], ["--key", "nope"], ["--key", " "], ["--key"]],
        ("explain", "--json"): [["--json=1"]],
        ("export-script", "--panel"): [["--panel", "nope"], ["--panel", ""], ["--panel"], []],
        ("export-script", "--step"): [
            ["--panel", "qkv", "--step", "0"],
            ["--panel", "qkv", "--step", "7"],
            ["--panel", "qkv", "--step", "x"],
            ["--step"],
        ],
        ("export-script", "--lesson"): [
            ["--lesson", "{missing}"],
            ["--lesson", "{folder}"],
            ["--lesson", "{file}"],
            ["--lesson"],
        ],
        ("export-script", "--model"): [["--panel", "qkv", "--model", "minilm"], ["--model"]],
        ("export-script", "--output"): [
            ["--panel", "qkv", "--output", "{missing}/script.py"],
            ["--panel", "qkv", "--output", "{folder}"],
            ["--output"],
        ],
    }
)
CASES.update(
    {
        ("induction", "--seed"): [["--seed", "-1"], ["--seed", "x"], ["--seed", str(2**31)], ["--seed"]],
        ("induction", "--steps"): [
            ["--steps", "0"],
            ["--steps", "-5"],
            ["--steps", "9" * 12],
            ["--steps", "1.5"],
        ],
        ("induction", "--layers"): [["--layers", "3"], ["--layers", "0"], ["--layers", "two"], ["--layers"]],
        ("induction", "--heads"): [["--heads", "0"], ["--heads", "3"], ["--heads", "99"], ["--heads"]],
        ("induction", "--lr"): [
            ["--lr", "0"],
            ["--lr", "-1e-3"],
            ["--lr", "nan"],
            ["--lr", "inf"],
            ["--lr", "fast"],
        ],
        ("induction", "--json"): [["--json", "{missing}/out.json"], ["--json", "{folder}"], ["--json"]],
    }
)
CASES.update(
    {
        ("linear", "--recall"): [["--recall=yes"]],
        ("linear", "--dim"): [["--dim", "1"], ["--dim", "513"], ["--dim", "8.5"], ["--dim"]],
        ("linear", "--pairs"): [
            ["--recall", "--pairs", "0"],
            ["--recall", "--pairs", "8,x"],
            ["--recall", "--pairs", ""],
            ["--recall", "--pairs", ",".join(["8"] * 17)],
            ["--recall", "--pairs", "16384"],  # would not fit: refused before it starts
            ["--pairs", "8"],  # without --recall
            ["--pairs"],
        ],
        ("linear", "--beta"): [["--recall", "--beta", "0"], ["--recall", "--beta", "nan"], ["--beta", "2"]],
        ("linear", "--decay"): [["--decay", "1.5"], ["--decay", "-0.1"], ["--decay", "slow"]],
        ("linear", "--features"): [["--features", "0"], ["--features", "5000"], ["--features", "many"]],
        ("linear", "--temperature"): [["--temperature", "0"], ["--temperature", "inf"]],
        ("linear", "--check"): [["--check=1"]],
        ("linear", "--length"): [["--length", "0"], ["--length", "9000"], ["--length", "1e3"]],
        ("linear", "--chunk"): [["--chunk", "0"], ["--chunk", "x"]],
        ("linear", "--seed"): [["--seed", "-1"], ["--seed", str(2**32)]],
        ("linear", "--json"): [["--json=1"]],
    }
)
PAIR = "the cat sat on the mat because the cat"
CASES.update(
    {
        ("patch", "--clean"): [
            ["--clean", ""],
            ["--clean", "the cat sat on a mat because the cat"],  # 15 tokens, the corrupted one 14
            ["--clean", PAIR * 9, "--corrupt", PAIR.replace(" on ", " in ") * 9],  # past the context
            ["--clean"],
        ],
        ("patch", "--corrupt"): [["--corrupt", PAIR], ["--corrupt", " "], ["--corrupt"]],
        ("patch", "--target"): [["--target", ""], ["--target", "because"], ["--target"]],
        ("patch", "--foil"): [["--foil", "the"], ["--foil", " "], ["--foil"]],
        ("patch", "--what"): [["--what", "everything"], ["--what", "q"], ["--what"]],
        ("patch", "--direction"): [["--direction", "sideways"], ["--direction"]],
        ("patch", "--approx"): [["--approx=1"]],
        ("patch", "--model"): [
            ["--model", "{missing}"],
            ["--model", "{folder}"],
            ["--model", ""],
            ["--model", "minilm"],
            ["--model", "smollm2"],  # not added in the test data folder
            ["--model"],
        ],
        ("patch", "--json"): [["--json=1"]],
    }
)
PATCH_PAIR = {
    "--clean": PAIR,
    "--corrupt": PAIR.replace(" on ", " in "),
    "--target": "the",
    "--foil": "because",
    "--model": "{llama}",
}
CASES.update(
    {
        ("stream", "--text"): [["--text", ""], ["--text", " \t "], ["--text"]],
        ("stream", "--position"): [["--position", "99"], ["--position", "-1"], ["--position", "x"],
                                   ["--position"]],
        ("stream", "--norm"): [["--norm", "0"], ["--norm", "9"], ["--norm", "last"], ["--norm"]],
        ("stream", "--model"): [["--model", "{missing}"], ["--model", "{folder}"], ["--model", ""]],
        ("stream", "--json"): [["--json=1"]],
        ("steer", "--text"): [["--text", ""], ["--text", " "], ["--text"]],
        ("steer", "--plus"): [["--plus", " "], ["--plus", " mat"], ["--plus"]],
        ("steer", "--minus"): [["--minus", ""], ["--minus"]],
        ("steer", "--layer"): [["--layer", "0"], ["--layer", "9"], ["--layer", "x"], ["--layer"]],
        ("steer", "--strength"): [["--strength", "nan"], ["--strength", "inf"], ["--strength", "1e400"],
                                  ["--strength", "x"], ["--strength"]],
        ("steer", "--prefix"): [["--prefix", "", "--plus", "c", "--minus", "m"], ["--prefix"]],
        ("steer", "--generate"): [["--generate", "0"], ["--generate", "501"], ["--generate", "x"]],
        ("steer", "--mode"): [["--mode", "double"], ["--mode"]],
        ("steer", "--sweep"): [["--sweep", "0"], ["--sweep", "0", "nan"], ["--sweep", "x", "1"],
                               ["--sweep", "0", "1", "--mode", "remove"]],
        ("steer", "--token"): [["--token", "the"], ["--token", " ", "--sweep", "0", "1"], ["--token"]],
        ("steer", "--model"): [["--model", "{missing}"], ["--model", "{folder}"], ["--model", ""]],
        ("steer", "--json"): [["--json=1"]],
    }
)  # fmt: skip
CASES.update(
    {
        ("atlas", "--text"): [["--text", ""], ["--text", " "], ["--text"]],
        ("atlas", "--length"): [["--length", "1"], ["--length", "x"], ["--length", "5000"], ["--length"]],
        ("atlas", "--seed"): [["--seed", "-1"], ["--seed", "1.5"], ["--seed", "x"], ["--seed"]],
        ("atlas", "--qk"): [["--qk", "0", "1"], ["--qk", "9", "1"], ["--qk", "1", "99"], ["--qk", "1"]],
        ("atlas", "--model"): [["--model", "{missing}"], ["--model", "{folder}"], ["--model", ""]],
        ("atlas", "--json"): [["--json=1"]],
        ("atlas", "--answer"): [["--answer", "", "--target", "cat", "--foil", "mat"], ["--answer"]],
        ("atlas", "--target"): [["--target", "cat"], ["--target", "cat", "--foil", "cat"], ["--target"]],
        ("atlas", "--foil"): [["--foil", "the"], ["--foil", " ", "--target", "cat"], ["--foil"]],
    }
)
CASES.update(
    {
        ("attribute", "--text"): [["--text", ""], ["--text", " "], ["--text", "t"], ["--text"]],
        ("attribute", "--target"): [["--target", ""], ["--target", "the", "--foil", "the"], ["--target"]],
        ("attribute", "--foil"): [["--foil", "the"], ["--foil", " ", "--target", "cat"], ["--foil"]],
        ("attribute", "--method"): [["--method", "shap"], ["--method"]],
        ("attribute", "--layer"): [["--layer", "0"], ["--layer", "9"], ["--layer", "x"], ["--layer"]],
        ("attribute", "--head"): [["--head", "0"], ["--head", "99"], ["--head", "1.5"], ["--head"]],
        ("attribute", "--steps"): [["--steps", "0"], ["--steps", "513"], ["--steps", "x"], ["--steps"]],
        ("attribute", "--baseline"): [["--baseline", ""], ["--baseline", " "], ["--baseline"]],
        ("attribute", "--model"): [["--model", "{missing}"], ["--model", "{folder}"], ["--model", ""]],
        ("attribute", "--json"): [["--json=1"]],
        ("attribute", "--set"): [["--set=1"], ["--set", "--target", "cat"]],
        ("attribute", "--pair"): [
            ["--pair", ""],
            ["--pair", " "],
            ["--pair", "the cat"],
            ["--pair"],
            ["--pair", "a dog", "--set"],
            ["--pair", "a dog", "--foil", "the"],
        ],
    }
)
CASES.update(
    {
        **{("circuit", f): CASES["patch", f] for f in ("--clean", "--corrupt", "--target", "--foil")},
        ("circuit", "--method"): [["--method", "acdc"], ["--method"]],
        ("circuit", "--steps"): [["--steps", "0"], ["--steps", "65"], ["--steps", "x"], ["--steps"]],
        ("circuit", "--direction"): [["--direction", "sideways"], ["--direction"]],
        ("circuit", "--edges"): [["--edges", "-1"], ["--edges", "9999"], ["--edges", "x"], ["--edges"]],
        ("circuit", "--exact"): [["--exact", "-1"], ["--exact", "25"], ["--exact", "2.5"], ["--exact"]],
        ("circuit", "--model"): CASES["patch", "--model"],
        ("circuit", "--json"): [["--json=1"]],
    }
)
CONTEXT_CASES = [["--context", n] for n in ("1", "0", "x", "1.5")] + [["--context"]]
CASES.update(
    {
        (command, "--context"): CONTEXT_CASES
        for command in ("predict", "explain", "patch", "stream", "steer", "atlas", "attribute", "circuit")
    }
)
AROUND = {  # a good value of every other flag, given around the one bad value
    "patch": PATCH_PAIR,
    "circuit": {**PATCH_PAIR, "--steps": "2"},
    "stream": {"--text": PAIR, "--model": "{llama}"},
    "atlas": {"--length": "8", "--answer": PAIR, "--model": "{llama}"},
    "attribute": {"--text": PAIR, "--steps": "2", "--model": "{llama}"},
    "steer": {"--text": "the cat", "--plus": " cat", "--minus": " mat", "--layer": "1", "--strength": "1",
              "--model": "{llama}"},
}  # fmt: skip
MODEL_COMMANDS = {"heads", "predict", "explain"}
TORCH_COMMANDS = MODEL_COMMANDS | {"induction", *AROUND}
NOT_USER_INPUT = {"-h", "--help", "--version", "--exit-after-paint"}


def flags_of(parser: argparse.ArgumentParser) -> set[str]:
    return {
        option
        for action in parser._actions
        if not isinstance(action, argparse._SubParsersAction)
        for option in action.option_strings
        if option.startswith("--") and option not in NOT_USER_INPUT
    }


def test_every_flag_has_bad_input_cases():
    parser = build_parser()
    expected = {(None, flag) for flag in flags_of(parser)}
    subparsers = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    for name, sub in subparsers.choices.items():
        expected |= {(name, flag) for flag in flags_of(sub)}
    assert expected - set(CASES) == set(), "flags without bad-input cases"
    assert set(CASES) - expected == set(), "cases for flags that no longer exist"


def cases():
    for (command, flag), argument_lists in CASES.items():
        marks = [pytest.mark.models] if command in TORCH_COMMANDS else []
        for arguments in argument_lists:
            if command in MODEL_COMMANDS and flag != "--text":
                arguments = TEXT + arguments
            if command in ("predict", "explain") and flag != "--model":
                arguments = ["--model", "{llama}", *arguments]  # a decoder that loads
            if command == "explain":
                arguments = [*EXPLAIN, *arguments]
            if command in AROUND:
                arguments = [
                    *arguments,
                    *(x for f, v in AROUND[command].items() if f not in arguments for x in (f, v)),
                ]
            name = f"{command or 'app'} {' '.join(arguments)[:40]}"
            yield pytest.param(command, arguments, id=name, marks=marks)


@pytest.fixture(scope="module")
def model_folders(tmp_path_factory):
    """Folders that look like models and are not, made from a tiny random GPT-2."""
    pytest.importorskip("torch")
    pytest.importorskip("transformers")
    from tests.tiny_models import save_tiny_gpt2, save_tiny_llama

    root = tmp_path_factory.mktemp("not-models")
    good = save_tiny_gpt2(root / "good")
    folders = {"llama": save_tiny_llama(root / "llama")}
    for name in ("pickled", "truncated", "lying", "huge_vocab"):
        folders[name] = root / name
        shutil.copytree(good, folders[name])
    (folders["pickled"] / "model.safetensors").unlink()
    (folders["pickled"] / "pytorch_model.bin").write_bytes(b"not unpickled")
    weights = folders["truncated"] / "model.safetensors"
    weights.write_bytes(weights.read_bytes()[:4000])
    for name, change in (("lying", {"n_embd": 48}), ("huge_vocab", {"vocab_size": 1_000_000})):
        config = json.loads((folders[name] / "config.json").read_text())
        (folders[name] / "config.json").write_text(json.dumps(config | change))
    return folders


@pytest.fixture
def minilm_once(monkeypatch):
    """The bundled model is loaded once for the module; every other source really loads."""
    pytest.importorskip("torch")
    real = models.load_model
    if "minilm" not in _MINILM:
        _MINILM["minilm"] = real("minilm")
    monkeypatch.setattr(
        models,
        "load_model",
        lambda s, **kw: _MINILM["minilm"] if s == "minilm" and not kw.get("expect") else real(s, **kw),
    )


_MINILM: dict = {}


@pytest.mark.parametrize("command, arguments", list(cases()))
def test_bad_value_is_one_line_and_exit_2(command, arguments, tmp_path, capsys, request):
    (tmp_path / "file").write_text("not a folder")
    (tmp_path / "folder").mkdir()
    places = {"file": tmp_path / "file", "folder": tmp_path / "folder", "missing": tmp_path / "missing"}
    if command in MODEL_COMMANDS or command in AROUND:
        request.getfixturevalue("minilm_once")
        if any(a.startswith("{") and a.strip("{}") not in places for a in arguments):
            places |= request.getfixturevalue("model_folders")
    arguments = [a.format(**places) for a in arguments]
    argv = [command, *arguments] if command else arguments
    if command == "bench":
        argv += [
            part for flag, value in TINY_BENCH.items() if flag not in arguments for part in (flag, value)
        ]
    try:
        code = main(argv)
    except SystemExit as exc:
        code = exc.code
    out, err = capsys.readouterr()
    assert code == 2, f"{argv} was accepted:\n{out}{err}"
    # Progress stages ("loading the model minilm…", the heartbeat's "… (2 s)") may come first;
    # the refusal is one line.
    *stages, last = err.strip().splitlines()
    staged = all(s.endswith("…") or HEARTBEAT_LINE.search(s) for s in stages)
    assert staged and "Traceback" not in err, f"{argv} printed:\n{err}"
    assert last.startswith("attention-lab") and ": error: " in last
    assert out == "", f"{argv} printed to stdout before refusing:\n{out}"


@pytest.mark.models
@pytest.mark.parametrize("name", ["pickled", "truncated", "lying"])
def test_a_folder_that_is_no_model_is_named_by_its_whole_path(name, model_folders, capsys):
    folder = model_folders[name]
    assert main(["heads", "--text", "the cat", "--model", str(folder)]) == 2
    assert f"'{folder}'" in capsys.readouterr().err  # not only its last part, which may be a common name
