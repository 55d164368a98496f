"""Which words make two sentences close, for an encoder: the five methods of
``core.interp.token_scores``, for the cosine similarity of the two sentences' mean-pooled
embeddings, each a score per token of the first sentence.

    s = similarity_scores(minilm, "A man is playing a guitar.", "Someone plays music.")
    s.cosine, s.methods["occlusion"], s.ig.gap

The second sentence's vector is computed once and held fixed. e_i is what the first block reads
at token i (core.decoder.encoder). Attention and rollout read every query row, not the last one:
the mean over positions weighs each position's output equally. Integrated gradients go from a
zero input to e at the midpoints of ``steps`` equal steps; occlusion sets one token's e_i to zero.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from core.decoder.encoder import attention_weights, embed, pooled
from core.interp.token_scores import Gradients, rollout, rows_per_run

Progress = Callable[[int, int], None]


@dataclass(frozen=True)
class Similarity:
    """The cosine of two sentences' vectors, explained on the first one's tokens."""

    ids: tuple[int, ...]  # (T,) the first sentence, its special tokens included
    other_ids: tuple[int, ...]
    cosine: float
    methods: dict[str, np.ndarray]  # name in token_scores.METHODS -> (T,)
    ig: Gradients


def tokens(model: Any, text: str) -> tuple[int, ...]:
    """A sentence's ids as the encoder reads it alone (cut to its context); ValueError when empty."""
    if not (text or "").strip():
        raise ValueError("Type both sentences: the similarity needs two.")
    return tuple(model.tokenizer(text, truncation=True, max_length=model.max_tokens)["input_ids"])


def similarity_scores(
    model: Any, text: str, other: str, steps: int = 32, progress: Progress | None = None
) -> Similarity:
    """Every method for cos(pool(text), pool(other)); ``progress(done, total)`` may raise to cancel."""
    import torch

    if model.kind != "encoder":
        raise ValueError(
            f"{model.name} is a decoder: the similarity of two sentences is read from an encoder."
        )
    if not 1 <= steps <= 512:
        raise ValueError(f"Integrated gradients takes 1 to 512 steps; got {steps}.")
    ids, other_ids = tokens(model, text), tokens(model, other)
    e = embed(model, ids)  # (T, hidden)
    with torch.no_grad():
        fixed = pooled(model, embed(model, other_ids)[None])[0]

    def cosine(rows: Any) -> Any:  # (B, T, hidden) -> (B,)
        return torch.nn.functional.cosine_similarity(pooled(model, rows), fixed[None], dim=-1)

    def gradient(rows: Any) -> tuple[Any, Any]:  # the cosines and their gradients at ``rows``
        rows = rows.clone().requires_grad_(True)
        value = cosine(rows)
        (grad,) = torch.autograd.grad(value.sum(), [rows])
        return value.detach(), grad

    n = len(ids)
    tick = progress or (lambda done, total: None)
    total = steps + n
    tick(0, total)
    metric, grad = gradient(e[None])
    alphas = (torch.arange(steps, dtype=torch.float32) + 0.5) / steps
    summed = torch.zeros_like(e)
    each = rows_per_run(n)
    for start in range(0, steps, each):
        summed += gradient(alphas[start : start + each, None, None] * e)[1].sum(0)
        tick(min(start + each, steps), total)
    with torch.no_grad():
        base = float(cosine(torch.zeros_like(e)[None])[0])
        dropped = []
        for start in range(0, n, each):
            rows = e[None].repeat(min(each, n - start), 1, 1)
            rows[torch.arange(len(rows)), torch.arange(start, start + len(rows))] = 0.0
            dropped.append(cosine(rows))
            tick(steps + start + len(rows), total)
    weights = attention_weights(model, ids)
    m = float(metric[0])
    ig = Gradients((e * summed / steps).sum(-1).double().numpy(), m, base, steps)
    methods = {
        "attention": weights[-1].mean(0).mean(0),  # the last layer: every head and query's mean
        "rollout": rollout(weights, rows="mean"),
        "gradxinput": (grad[0] * e).sum(-1).double().numpy(),
        "ig": ig.scores,
        "occlusion": m - torch.cat(dropped).double().numpy(),
    }
    return Similarity(ids, other_ids, m, methods, ig)
