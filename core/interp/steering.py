"""Steering a decoder with one vector: the difference of two texts' streams, added to the stream.

    vector = steering_vector(model, " weddings", " funerals", layer=9)   # after block 10
    normal = greedy(model, ids, 20)
    steered = greedy(model, ids, 20, steer(vector, strength=4.0))     # every position but the first

Each text is read after the same prefix ("I talk about" unless given), so that its last token is
not the first of the run: the first token's stream is the attention sink, many times the size of
the others', and would swamp the difference. The vector is the difference of the two last
tokens' streams leaving block ``layer``. Steering adds strength × vector to that stream at every
position but the first, of the prompt and of every generated token, or (mode "remove") takes the
vector's direction out of it. Generation is greedy, with the KV cache. Layers are 0-based.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from core.decoder.run import Edit, hooked_run
from core.interp.prediction import encode

__all__ = ["MODES", "PREFIX", "Generated", "SteeringVector", "greedy", "steer", "steering_vector"]

PREFIX = "I talk about"
MODES = ("add", "remove")


@dataclass(frozen=True)
class SteeringVector:
    """``plus`` − ``minus``: their last tokens' streams leaving block ``layer``, after a prefix."""

    layer: int
    vector: Any  # (hidden,) torch float32
    stream_norm: float  # the mean size of the two streams it is the difference of

    @property
    def norm(self) -> float:
        return float(self.vector.norm())


@dataclass(frozen=True)
class Generated:
    """Greedy new tokens; ``overflow`` is the index of the first one whose logits were not finite."""

    ids: tuple[int, ...]
    overflow: int | None = None


def steering_vector(model: Any, plus: str, minus: str, layer: int, prefix: str = PREFIX) -> SteeringVector:
    """The stream of ``prefix + plus`` minus that of ``prefix + minus`` at their last tokens,
    leaving block ``layer`` of ``model`` (a LoadedModel decoder); ValueError for an empty or
    identical text, a layer that does not exist, or a last token with nothing before it."""
    if not plus.strip() or not minus.strip():
        raise ValueError("Give two texts to steer between, e.g. ' weddings' and ' funerals'.")
    if plus == minus:
        raise ValueError("The two texts are the same, so their difference is zero; change one.")
    if not 0 <= layer < model.n_layers:
        raise ValueError(f"Layer {layer + 1} does not exist: this model has layers 1 to {model.n_layers}.")
    streams = []
    for text in (plus, minus):
        ids = encode(model, prefix + text)[0]
        if len(ids) < 2:
            raise ValueError(
                f"{prefix + text!r} is one token: its stream would be the first token's, the attention "
                "sink. Give a prefix (e.g. 'I talk about')."
            )
        streams.append(hooked_run(model, ids, cache=[("resid_post", layer)], unembed=False).cache[
            "resid_post", layer][0, -1].float())  # fmt: skip
    a, b = streams
    return SteeringVector(layer, a - b, float((a.norm() + b.norm()) / 2))


def steer(vector: SteeringVector, strength: float = 1.0, mode: str = "add") -> list[Edit]:
    """The edits that steer with ``vector`` at ``strength`` ("add") or remove its direction
    ("remove"), at every position but the first; ValueError for a strength that is not finite."""
    if mode not in MODES:
        raise ValueError(f"Unknown mode {mode!r}; choose {' or '.join(MODES)}.")
    if not math.isfinite(strength):
        raise ValueError(f"The strength must be a finite number, not {strength}.")
    if mode == "remove":
        return [Edit("resid_post", vector.layer, "remove", vector.vector, positions=slice(1, None))]
    return [Edit("resid_post", vector.layer, "add", strength * vector.vector, positions=slice(1, None))]


def greedy(model: Any, ids: Sequence[int], new: int, edits: Sequence[Edit] = ()) -> Generated:
    """``new`` tokens after ``ids``, each the most likely, the run edited by ``edits`` throughout
    (one run over the prompt, then one per token on its KV cache)."""
    import torch

    if new < 1:
        raise ValueError("Generate at least one token.")
    out = hooked_run(model, ids, edits=edits, keep_past=True)
    made: list[int] = []
    while True:
        logits = out.logits[0, -1]
        if not torch.isfinite(logits).all():
            return Generated(tuple(made), len(made))
        made.append(int(logits.argmax()))
        if len(made) == new:
            return Generated(tuple(made))
        out = hooked_run(model, made[-1:], edits=edits, past=out.past, keep_past=True)
