"""Step 1: one head's real numbers for one query and one key.

s = head_step(rec, layer, head, i, j)        # rec: core.interp.head.record.Recorded, all 0-based
s.dot * s.scale == s.score; s.row[j] == s.weight; s.row @ s.values == s.output
softmax(s.scores) == s.row                    # scores: what the softmax receives (capped, masked)
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from core.interp.head.record import Recorded


@dataclass(frozen=True)
class HeadStep:
    """q_i · k_j, the scaling, the query's row of weights and the weighted sum of values."""

    layer: int
    head: int
    kv_head: int
    i: int  # query position
    j: int  # key position
    q: np.ndarray  # (d,) the real query (after rotary)
    k: np.ndarray  # (d,) the real key (after rotary)
    dot: float
    scale: float  # the model's own multiplier (1/√d for GPT-2 and Llama)
    score: float  # dot · scale, what the softmax receives unless masked or capped
    hidden: str | None  # why the mask adds −∞ (weight 0): after the query, outside the window; or None
    scores: np.ndarray  # (T,) the query's row as the softmax receives it: capped, −inf where masked
    row: np.ndarray  # (T,) the model's weights for this query
    values: np.ndarray  # (T, d) the real values the head reads
    output: np.ndarray  # (d,) the head's output at the query: the row's weighted sum of values
    cap: float | None = None  # c of Gemma 2's soft cap c·tanh(score/c) before the softmax
    window: int | None = None  # this layer's sliding window: the query sees itself and window − 1 back

    @property
    def received(self) -> float:
        """The score as the softmax receives it (before the mask): capped where the model caps."""
        return self.score if self.cap is None else self.cap * float(np.tanh(self.score / self.cap))

    @property
    def weight(self) -> float:
        return float(self.row[self.j])

    @property
    def masked(self) -> bool:
        return self.hidden is not None


def hidden_by(causal: bool, window: int | None, i: int, j: int) -> str | None:
    """Why the mask hides key ``j`` from query ``i`` (0-based), or None when it does not."""
    if causal and j > i:
        return "the key comes after the query"
    if window is not None and i - j >= window:
        return f"the key is {i - j} tokens back, outside this layer's window of {window}"
    return None


def check_cell(rec: Recorded, layer: int, head: int, i: int, j: int) -> None:
    """ValueError, counted from 1 as shown, for a layer, head or position that does not exist."""
    if not 0 <= layer < rec.layers:
        raise ValueError(f"Layer {layer + 1} does not exist: this model has layers 1–{rec.layers}.")
    if not 0 <= head < rec.heads:
        raise ValueError(f"Head {head + 1} does not exist: each layer has heads 1–{rec.heads}.")
    n = len(rec.ids)
    for name, t in (("query", i), ("key", j)):
        if not 0 <= t < n:
            raise ValueError(f"The {name} position {t + 1} does not exist: the text has tokens 1–{n}.")


def head_step(rec: Recorded, layer: int, head: int, i: int, j: int) -> HeadStep:
    """The head's computation for query ``i`` and key ``j`` (0-based), from the recorded run."""
    check_cell(rec, layer, head, i, j)
    g = rec.kv_head(head)
    q = rec.q[layer][head, i].numpy().astype(np.float64)
    keys = rec.k[layer][g].numpy().astype(np.float64)
    scale = rec.scaling[layer]
    scores, cap = keys @ q * scale, rec.caps[layer]
    if cap is not None:
        scores = cap * np.tanh(scores / cap)
    window = rec.windows[layer]
    if rec.causal:
        scores[i + 1 :] = -np.inf
    if window is not None:
        scores[: max(i - window + 1, 0)] = -np.inf
    return HeadStep(
        layer=layer,
        head=head,
        kv_head=g,
        i=i,
        j=j,
        q=q,
        k=keys[j],
        dot=float(keys[j] @ q),
        scale=scale,
        score=float(keys[j] @ q * scale),
        hidden=hidden_by(rec.causal, window, i, j),
        scores=scores,
        row=rec.weights[layer][head, i].numpy().astype(np.float64),
        values=rec.v[layer][g].numpy().astype(np.float64),
        output=rec.z[layer][i, head].numpy().astype(np.float64),
        cap=cap,
        window=window,
    )


def token_position(pieces: tuple[str, ...], text: str, name: str) -> int:
    """A 0-based position from what the user typed: a number counted from 1, or a token's text
    where it occurs once (spaces around it ignored). ValueError otherwise, saying why."""
    typed = text.strip()
    if typed.isdigit():
        t = int(typed)
        if not 1 <= t <= len(pieces):
            raise ValueError(f"The {name} position {t} does not exist: the text has tokens 1–{len(pieces)}.")
        return t - 1
    found = [t for t, p in enumerate(pieces) if p == text] or [
        t for t, p in enumerate(pieces) if p.strip() == typed and typed
    ]
    if len(found) == 1:
        return found[0]
    if not found:
        raise ValueError(f"No token reads '{typed}' for the {name}; give its position (1–{len(pieces)}).")
    at = ", ".join(str(t + 1) for t in found)
    raise ValueError(f"'{typed}' occurs at positions {at}; give the {name} as one of those numbers.")
