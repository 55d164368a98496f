"""What a slow command is doing, on stderr, so the table or JSON on stdout stays clean.

Every wait that can pass a second gets a stage line ("loading the model minilm…"), on a terminal
and when piped, so a person, a log or a CI run sees where the time goes. On a terminal a counter
also ticks within a stage; piped, it stays silent (one line per stage is enough for a log).
"""

from __future__ import annotations

import importlib.util
import sys
from collections.abc import Callable


def stage(text: str) -> None:
    """Say on stderr that a step that may take a while starts now."""
    print(f"{text}…", file=sys.stderr, flush=True)


def importing(module: str) -> None:
    """A stage line for importing ``module`` (torch takes seconds), when it is installed and not
    imported yet."""
    if module not in sys.modules and importlib.util.find_spec(module) is not None:
        stage(f"loading {module}")


def counter(label: str) -> Callable[[int, int], None]:
    """A ``progress(done, total)`` callback showing "label: done/total", on a terminal only."""

    def progress(done: int, total: int) -> None:
        if sys.stderr.isatty():
            end = "\n" if done >= total else ""
            print(f"\r{label}: {done}/{total}", end=end, file=sys.stderr, flush=True)

    return progress


def load_model(source: str, expect: str | None = None):
    """The model ``source`` names (``expect``: its kind), loaded with a stage line and a counter;
    a missing torch or transformers becomes the one-line ValueError every command prints."""
    from core import models

    stage(f"loading the model {source}")
    try:
        return models.load_model(source, progress=counter("loading steps"), expect=expect)
    except models.ModelsExtraMissing as exc:
        raise ValueError(str(exc)) from exc
