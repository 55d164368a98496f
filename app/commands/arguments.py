"""Typed command-line numbers go through the same bounded parsers as the panels (core.inputs)."""

from __future__ import annotations

import argparse
from collections.abc import Callable
from functools import partial

from core import inputs


def typed(parse: Callable, *args) -> Callable[[str], object]:
    """An argparse ``type`` for ``parse(text, *args)``: its ValueError becomes argparse's one-line error."""

    def convert(text: str):
        try:
            return parse(text, *args)
        except ValueError as exc:
            raise argparse.ArgumentTypeError(str(exc)) from exc

    return convert


def count(name: str, high: int) -> Callable[[str], int]:
    """A whole number from 1 to ``high``, named as the flag is."""
    return typed(partial(inputs.whole, name=name, low=1, high=high))


def seed(name: str) -> Callable[[str], int]:
    return typed(inputs.seed, name)
