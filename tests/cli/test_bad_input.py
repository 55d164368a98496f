"""Every flag of every subcommand, given bad values: exit code 2, one line on stderr, no traceback.

The table is checked against the parser, so a new flag without a bad-input case fails here.
Bench cases run on a tiny sweep, so a value that is wrongly accepted costs a moment, not minutes.
"""

from __future__ import annotations

import argparse

import pytest

from app.main import build_parser, main

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
        ["--lengths"],
    ],
    ("bench", "--dtype"): [["--dtype", "fp8"], ["--dtype", ""], ["--dtype"]],
    ("bench", "--causal"): [["--causal=yes"]],
    ("bench", "--batch"): [["--batch", "0"], ["--batch", "-1"], ["--batch", "x"], ["--batch", "1.5"]],
    ("bench", "--heads"): [["--heads", "0"], ["--heads", "two"], ["--heads"]],
    ("bench", "--head-dim"): [["--head-dim", "0"], ["--head-dim", "1e3"], ["--head-dim"]],
    ("bench", "--window"): [["--window", "0"], ["--window", "-3"], ["--window", "∞"]],
    ("bench", "--repeats"): [["--repeats", "0"], ["--repeats", "many"], ["--repeats"]],
    ("bench", "--seed"): [["--seed", "-1"], ["--seed", "0x10"], ["--seed"]],
    ("bench", "--json"): [["--json", "{missing}/out.json"], ["--json", "{folder}"], ["--json"]],
    ("bench", "--csv"): [["--csv", "{missing}/out.csv"], ["--csv", "{folder}"], ["--csv"]],
}
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
    for (command, _flag), argument_lists in CASES.items():
        for arguments in argument_lists:
            yield pytest.param(command, arguments, id=f"{command or 'app'} {' '.join(arguments)[:40]}")


@pytest.mark.parametrize("command, arguments", list(cases()))
def test_bad_value_is_one_line_and_exit_2(command, arguments, tmp_path, capsys):
    (tmp_path / "file").write_text("not a folder")
    (tmp_path / "folder").mkdir()
    places = {"file": tmp_path / "file", "folder": tmp_path / "folder", "missing": tmp_path / "missing"}
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
    lines = err.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in err, f"{argv} printed:\n{err}"
    assert lines[0].startswith("attention-lab") and ": error: " in lines[0]
    assert out == "", f"{argv} printed to stdout before refusing:\n{out}"
