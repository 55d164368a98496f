"""Steering a decoder with one vector: the difference of two texts' streams, added to the stream.

    vector = steering_vector(model, " food", " sports", layer=9)   # after block 10
    normal = greedy(model, ids, 20)
    steered = greedy(model, ids, 20, steer(vector, strength=4.0))     # every position but the first
    sweep = strength_sweep(model, ids, vector, np.linspace(0, 2, 21), token_id)   # the next token

Each text is read after the same prefix ("I talk about" unless given; a word gets its space), so
that its last token is not the first of the run: the first position is the attention sink, and its
stream there holds that job more than the word (on SmolLM2 after layer 10, " weddings" − " funerals"
read alone has a cosine of 0.14 with the vector read after the prefix). The vector is the difference
of the two last tokens' streams leaving block ``layer``. Steering adds strength × vector to that
stream at every position but the first, of the prompt and of every generated token, or (mode
"remove") takes the vector's direction out of it. Generation is greedy, with the KV cache. A sweep
of strengths is one batched run per few strengths, each a row. Layers are 0-based.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from core.decoder.adapter import adapter_of
from core.decoder.run import Edit, hooked_run
from core.interp.prediction import encode
from core.interp.ranking import continuation

__all__ = [
    "MODES", "PREFIX", "Generated", "SteeringVector", "StrengthSweep", "after_prefix", "greedy", "steer",
    "steering_vector", "strength_sweep",
]  # fmt: skip
ROWS = 5  # strengths per batched run of a sweep: a cancel lands within one

PREFIX = "I talk about"
MODES = ("add", "remove")


@dataclass(frozen=True)
class SteeringVector:
    """``plus`` − ``minus``: their last tokens' streams leaving block ``layer``, after a prefix."""

    layer: int
    vector: Any  # (hidden,) torch float32
    stream_norm: float  # the mean size of the two streams it is the difference of
    read: tuple[str, str]  # the two texts exactly as run: the prefix and each text, joined

    @property
    def norm(self) -> float:
        return float(self.vector.norm())


@dataclass(frozen=True)
class Generated:
    """Greedy new tokens; ``overflow`` is the index of the first one whose logits were not finite."""

    ids: tuple[int, ...]
    overflow: int | None = None


def after_prefix(prefix: str, text: str) -> str:
    """``text`` read after ``prefix`` as a person means it (``core.interp.ranking.continuation``):
    "I talk about" + "love" → "I talk about love"."""
    return prefix + continuation(prefix, text)


def steering_vector(model: Any, plus: str, minus: str, layer: int, prefix: str = PREFIX) -> SteeringVector:
    """The stream of ``plus`` minus that of ``minus`` at their last tokens, each read after
    ``prefix`` (``after_prefix``), leaving block ``layer`` of ``model`` (a LoadedModel decoder);
    ValueError for an empty or identical text, a layer that does not exist, or a last token with
    nothing before it."""
    if not plus.strip() or not minus.strip():
        raise ValueError("Give two texts to steer between, e.g. ' food' and ' sports'.")
    if plus == minus:
        raise ValueError("The two texts are the same, so their difference is zero; change one.")
    if not 0 <= layer < model.n_layers:
        raise ValueError(f"Layer {layer + 1} does not exist: this model has layers 1 to {model.n_layers}.")
    streams, read = [], (after_prefix(prefix, plus), after_prefix(prefix, minus))
    for text in read:
        ids = encode(model, text)[0]
        if len(ids) < 2:
            raise ValueError(
                f"{text!r} is one token: its stream would be the first token's, the attention "
                "sink. Give a prefix (e.g. 'I talk about')."
            )
        streams.append(hooked_run(model, ids, cache=[("resid_post", layer)], unembed=False).cache[
            "resid_post", layer][0, -1].float())  # fmt: skip
    a, b = streams
    return SteeringVector(layer, a - b, float((a.norm() + b.norm()) / 2), read)


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


def greedy(
    model: Any,
    ids: Sequence[int],
    new: int,
    edits: Sequence[Edit] = (),
    progress: Callable[[int, int], None] | None = None,
) -> Generated:
    """``new`` tokens after ``ids``, each the most likely, the run edited by ``edits`` throughout
    (one run over the prompt, then one per token on its KV cache). ``progress(done, new)`` after
    each token may raise to cancel."""
    import torch

    if new < 1:
        raise ValueError("Generate at least one token.")
    tick = progress or (lambda done, total: None)
    tick(0, new)
    out = hooked_run(model, ids, edits=edits, keep_past=True)
    made: list[int] = []
    while True:
        logits = out.logits[0, -1]
        if not torch.isfinite(logits).all():
            tick(new, new)
            return Generated(tuple(made), len(made))
        made.append(int(logits.argmax()))
        tick(len(made), new)
        if len(made) == new:
            return Generated(tuple(made))
        out = hooked_run(model, made[-1:], edits=edits, past=out.past, keep_past=True)


@dataclass(frozen=True)
class StrengthSweep:
    """The next token after a prompt, steered at each strength."""

    strengths: np.ndarray  # (S,)
    token: int  # the token followed
    prob: np.ndarray  # (S,) its probability
    entropy: np.ndarray  # (S,) of the whole next-token distribution, in nats
    top: np.ndarray  # (S,) int: the most likely next token; −1 where the logits overflowed
    most: float  # the largest entropy there can be: every token alike, ln(vocabulary)

    @property
    def breakdown(self) -> int | None:
        """Where the text breaks down: the index of the largest entropy, when the entropy first rises
        to it and then falls below where the sweep began (one token swamps the rest); else None."""
        peak = int(np.argmax(self.entropy))
        return peak if peak > 0 and (self.entropy[peak + 1 :] < self.entropy[0]).any() else None


def strength_sweep(
    model: Any,
    ids: Sequence[int],
    vector: SteeringVector,
    strengths: Sequence[float],
    token: int,
    progress: Callable[[int, int], None] | None = None,
) -> StrengthSweep:
    """The next token's distribution after ``ids`` steered by ``vector`` at each of ``strengths``
    (added at every position but the first): ``ROWS`` strengths a run, the layers before the
    steered one run once. ``progress(done, total)`` (strengths) may raise to cancel."""
    import torch

    strengths = np.asarray(strengths, dtype=np.float64)
    if strengths.ndim != 1 or len(strengths) == 0 or not np.isfinite(strengths).all():
        raise ValueError("Give one or more finite strengths.")
    adapter = adapter_of(model.module)
    if not 0 <= token < adapter.shape.vocab:
        raise ValueError(f"Token id {token} is outside the vocabulary (0–{adapter.shape.vocab - 1}).")
    tick = progress or (lambda done, total: None)
    total, rows = len(strengths), []
    tick(0, total)
    for start in range(0, total, ROWS):
        chunk = torch.as_tensor(strengths[start : start + ROWS], dtype=torch.float32)
        value = chunk[:, None, None] * vector.vector  # (B, 1, hidden): one strength per row
        edit = Edit("resid_post", vector.layer, "add", value, positions=slice(1, None))
        out = hooked_run(model, ids, edits=[edit], fan_out=(vector.layer, len(chunk)), unembed=False)
        with torch.inference_mode():
            rows.append(torch.log_softmax(adapter.logits_of(out.normed[:, -1]).double(), dim=-1))
        tick(min(start + ROWS, total), total)
    logp = torch.cat(rows)  # (S, vocab)
    entropy = -(logp.exp() * logp.nan_to_num(neginf=0.0)).sum(-1)
    top = torch.where(logp.isnan().any(-1), -1, logp.argmax(-1))  # an overflowed row has none
    return StrengthSweep(
        strengths, token, logp[:, token].exp().numpy(), entropy.numpy(), top.numpy(),
        math.log(logp.shape[-1]),
    )  # fmt: skip
