"""What a slow command is doing, on stderr: the table or JSON on stdout stays clean."""

from __future__ import annotations

import sys
from collections.abc import Callable


def stage(text: str) -> None:
    """Say on stderr that a step that may take a while starts now."""
    print(f"{text}…", file=sys.stderr, flush=True)


def counter(label: str) -> Callable[[int, int], None]:
    """A ``progress(done, total)`` callback showing "label: done/total", on a terminal only."""

    def progress(done: int, total: int) -> None:
        if sys.stderr.isatty():
            end = "\n" if done >= total else ""
            print(f"\r{label}: {done}/{total}", end=end, file=sys.stderr, flush=True)

    return progress
