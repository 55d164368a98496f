"""What every step page of the Next token panel draws from: one immutable snapshot of the
model's state, made by the panel after each model run or settings change."""

from __future__ import annotations

from dataclasses import dataclass

from core.decoder import Generation
from core.models import LoadedModel
from core.sampling import Choice, Distribution

SPACE = "␣"


def visible(piece: str) -> str:
    """A token's text with spaces and line breaks made visible ("␣Paris")."""
    return piece.replace(" ", SPACE).replace("\n", "↵") or "∅"


@dataclass(frozen=True)
class Snapshot:
    model: LoadedModel
    generation: Generation  # the prompt and the tokens appended so far, with the KV cache
    dist: Distribution  # the next token's distribution under the current settings
    choices: list[Choice]  # its most probable tokens, most probable first
    rest: float  # probability of every other token
    labels: list[str]  # visible text of each choice
