"""Step 2, why here: the score q_i·k_j·scale as an exact sum of query-part × key-part terms.

    split = why_here(rec, layer, head, i, j)
    split.query_totals.sum() ≈ split.key_totals.sum() ≈ split.score   (each part's total share)
    split.pairs                                                        (Pq, Pk) every term

With the norm before attention frozen at this run's scale (``parts.frozen_norm``), q_i and k_j are
linear in the parts of the residual stream at i and j: each part goes through the frozen norm,
the head's slice of the query (key) projection (rows of a fused projection for GPT-2, Phi-3 and
GPT-NeoX), the norm on each head's query (key) frozen the same way (Qwen3, Gemma 3) and, with
rotary, the rotation of its position (linear per position, on part of the head for GPT-NeoX).
Biases (the norm's β, the projection's bias) are parts of their own.

Gemma 2 soft-caps its scores, cap·tanh(score/cap), before the softmax; that is not linear, so
what is split is the score before the cap, and ``note`` says so with the capped value.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from core.interp.head.parts import check_close, check_split, frozen_norm, stream_parts
from core.interp.head.record import Recorded
from core.interp.head.step import check_cell

TOP_PAIRS = 50


@dataclass(frozen=True)
class ScoreSplit:
    """The score of query i against key j, split by where the query and the key came from."""

    score: float  # the real score, q_i·k_j·scale, from the recorded run (before any soft cap)
    query_parts: tuple[str, ...]  # (Pq,)
    key_parts: tuple[str, ...]  # (Pk,)
    pairs: np.ndarray  # (Pq, Pk) the term of each query part with each key part
    note: str = ""  # where the softmax receives other than ``score`` (Gemma 2's cap)

    @property
    def query_totals(self) -> np.ndarray:
        """(Pq,) each query part's share: its term with the whole key."""
        return self.pairs.sum(1)

    @property
    def key_totals(self) -> np.ndarray:
        """(Pk,) each key part's share: its term with the whole query."""
        return self.pairs.sum(0)

    def largest(self, n: int = TOP_PAIRS) -> list[tuple[str, str, float]]:
        """The ``n`` terms largest in size: (query part, key part, value)."""
        flat = np.argsort(-np.abs(self.pairs), axis=None)[:n]
        rows, cols = np.unravel_index(flat, self.pairs.shape)
        return [
            (self.query_parts[a], self.key_parts[b], float(self.pairs[a, b]))
            for a, b in zip(rows, cols, strict=True)
        ]


def side(adapter: Any, rec: Recorded, layer: int, which: str, head: int, t: int) -> tuple[list[str], Any]:
    """The parts of one head's query (``which`` "q") or key ("k") at position t: names, (P, d) torch."""
    import torch

    parts = stream_parts(adapter, rec, layer, t)
    norm = frozen_norm(adapter.pre_norm(layer), rec.streams[layer, t])
    weight, bias = (
        None if x is None else x.detach().double() for x in adapter.qkv_weight(layer, which, head)
    )
    names, vectors = list(parts.names), [norm(parts.vectors) @ weight.T]
    if norm.bias is not None:
        names.append("norm bias")
        vectors.append((norm.bias @ weight.T)[None])
    if bias is not None:
        names.append("query bias" if which == "q" else "key bias")
        vectors.append(bias[None])
    projected = torch.cat(vectors)
    head_norm = adapter.head_norm(layer, which)
    if head_norm is not None:  # Qwen3, Gemma 3: an RMSNorm on each head's query (key), frozen at its input
        projected = frozen_norm(head_norm, projected.sum(0))(projected)
    if rec.rotary[layer] is not None:
        cos, sin = (c[t].double()[None, None] for c in rec.rotary[layer])  # (1, 1, d)
        as_queries = projected[:, None, None]  # (P, 1, 1, d): P rows of one head at one position
        projected = adapter.rotate(layer, as_queries, cos, sin).reshape(len(projected), -1)
    real = (rec.q[layer][head] if which == "q" else rec.k[layer][head])[t]
    check_close(projected.sum(0), real, "query" if which == "q" else "key")
    return names, projected


def why_here(rec: Recorded, layer: int, head: int, i: int, j: int) -> ScoreSplit:
    """Split head ``head`` of ``layer``'s score of query ``i`` against key ``j`` (0-based); with
    Gemma 2's soft cap, the score before the cap (``note`` gives the capped one)."""
    check_cell(rec, layer, head, i, j)
    adapter = check_split(rec)
    query_names, queries = side(adapter, rec, layer, "q", head, i)
    key_names, keys = side(adapter, rec, layer, "k", rec.kv_head(head), j)
    pairs = (queries @ keys.T * rec.scaling[layer]).numpy()
    real = (
        float(rec.q[layer][head, i].double() @ rec.k[layer][rec.kv_head(head), j].double())
        * rec.scaling[layer]
    )
    cap, note = rec.caps[layer], ""
    if cap:
        note = (
            f"This model caps its scores: the softmax receives {cap:g}·tanh(score/{cap:g}) = "
            f"{cap * np.tanh(real / cap):.4f}. The parts add up to the score before the cap, {real:.4f}."
        )
    return ScoreSplit(real, tuple(query_names), tuple(key_names), pairs, note)
