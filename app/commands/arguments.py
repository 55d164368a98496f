"""Typed command-line numbers go through the same bounded parsers as the panels (core.inputs);
the flags and the output several commands share."""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable, Iterable
from functools import partial

from core import inputs


class Parser(argparse.ArgumentParser):
    """Refuses bad arguments in one line (exit code 2) instead of argparse's usage block."""

    def error(self, message: str):
        self.exit(2, f"{self.prog}: error: {message} (see {self.prog} --help)\n")


def typed(parse: Callable, *args) -> Callable[[str], object]:
    """An argparse ``type`` for ``parse(text, *args)``: its ValueError becomes argparse's one-line error."""

    def convert(text: str):
        try:
            return parse(text, *args)
        except ValueError as exc:
            raise argparse.ArgumentTypeError(str(exc)) from exc

    return convert


def count(name: str, high: int, low: int = 1) -> Callable[[str], int]:
    """A whole number from ``low`` to ``high``, named as the flag is."""
    return typed(partial(inputs.whole, name=name, low=low, high=high))


def number(name: str, low: float, high: float) -> Callable[[str], float]:
    """A finite number from ``low`` to ``high``, named as the flag is."""
    return typed(partial(inputs.real, name=name, low=low, high=high))


def seed(name: str) -> Callable[[str], int]:
    return typed(inputs.seed, name)


def decoder_flags(parser, default: str | None = "smollm2", more: str = "") -> None:
    """``--model`` (a decoder, SmolLM2 by default; None: the command chooses, as ``more`` says),
    ``--context`` and ``--json``."""
    parser.add_argument(
        "--model", default=default, metavar="smollm2|PATH", help=f"'smollm2' (once added) or a decoder{more}"
    )
    context_flag(parser)
    parser.add_argument("--json", action="store_true", help="print one JSON document instead of text")


def context_flag(parser) -> None:
    """``--context N``: read at most N tokens of a prompt (default: as many as the model's context)."""
    parser.add_argument(
        "--context", type=count("--context", 10**7, low=2), metavar="N",
        help="read at most N tokens of a prompt (default: the model's own context, where memory allows); "
        "a longer prompt keeps its first special token and its last tokens, and says so",
    )  # fmt: skip


def read_prompt(model, text: str) -> tuple[list[int], list[str]]:
    """The ids of ``text`` as ``model`` reads it (core.interp.prediction.encode) and the notes for
    the output: what a cut dropped, or none."""
    from core.interp.prediction import cut_note, encode

    ids, dropped = encode(model, text)
    note = cut_note(model, ids, dropped)
    return ids, [note] if note else []


def report(doc: dict, as_json: bool, lines: Callable[[], Iterable[str]]) -> int:
    """Print ``doc`` as one JSON document, or ``lines()`` as text; exit code 0."""
    if as_json:
        json.dump(doc, sys.stdout, ensure_ascii=False)
        print()
    else:
        for line in lines():
            print(line)
    return 0


def pair_arguments(parser) -> None:
    """--clean, --corrupt, --target and --foil: the pair activation patching and circuits compare."""
    parser.add_argument("--clean", required=True, metavar="TEXT", help="the prompt the model gets right")
    parser.add_argument(
        "--corrupt", required=True, metavar="TEXT", help="the same number of tokens with a word changed"
    )
    parser.add_argument("--target", required=True, metavar="T", help="the clean prompt's answer, one token")
    parser.add_argument(
        "--foil", required=True, metavar="F", help="the answer the corruption points to, one token"
    )
