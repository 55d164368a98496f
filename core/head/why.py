"""Step 2, why here: the score q_i·k_j·scale as an exact sum of query-part × key-part terms.

    split = why_here(rec, layer, head, i, j)
    split.query_totals.sum() ≈ split.key_totals.sum() ≈ split.score   (each part's total share)
    split.pairs                                                        (Pq, Pk) every term

With the norm before attention frozen at this run's scale (``parts.frozen_norm``), q_i and k_j are
linear in the parts of the residual stream at i and j: each part goes through the frozen norm,
the head's slice of the query (key) projection and, with rotary, the rotation of its position
(linear per position). Biases (the norm's β, the projection's bias) are parts of their own.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from typing import Any

import numpy as np

from core.head.parts import PRE_ATTENTION_NORM, check_close, check_split, frozen_norm, stream_parts
from core.head.record import Recorded
from core.head.step import check_cell

TOP_PAIRS = 50


@dataclass(frozen=True)
class ScoreSplit:
    """The score of query i against key j, split by where the query and the key came from."""

    score: float  # the real score, q_i·k_j·scale, from the recorded run
    query_parts: tuple[str, ...]  # (Pq,)
    key_parts: tuple[str, ...]  # (Pk,)
    pairs: np.ndarray  # (Pq, Pk) the term of each query part with each key part

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


def _projection(adapter: Any, layer: int, which: str, head: int) -> tuple[Any, Any]:
    """(d, hidden) weight and (d,) bias or None of one head's query ("q") or key ("k") projection."""
    attention, d = adapter.attention(layer), adapter.shape.head_dim
    rows = slice(head * d, (head + 1) * d)
    if adapter.family.name == "GPT-2":  # c_attn: Conv1D (hidden, 3·hidden) = [q | k | v]
        start = 0 if which == "q" else adapter.shape.hidden
        cols = slice(start + rows.start, start + rows.stop)
        return attention.c_attn.weight[:, cols].T.detach().double(), attention.c_attn.bias[
            cols
        ].detach().double()
    linear = getattr(attention, f"{which}_proj")
    bias = None if linear.bias is None else linear.bias[rows].detach().double()
    return linear.weight[rows].detach().double(), bias


def side(adapter: Any, rec: Recorded, layer: int, which: str, head: int, t: int) -> tuple[list[str], Any]:
    """The parts of one head's query (``which`` "q") or key ("k") at position t: names, (P, d) torch."""
    import torch

    parts = stream_parts(adapter, rec, layer, t)
    norm = frozen_norm(
        getattr(adapter.blocks[layer], PRE_ATTENTION_NORM[adapter.family.name]), rec.streams[layer, t]
    )
    weight, bias = _projection(adapter, layer, which, head)
    names, vectors = list(parts.names), [norm(parts.vectors) @ weight.T]
    if norm.bias is not None:
        names.append("norm bias")
        vectors.append((norm.bias @ weight.T)[None])
    if bias is not None:
        names.append("query bias" if which == "q" else "key bias")
        vectors.append(bias[None])
    projected = torch.cat(vectors)
    if rec.rotary[layer] is not None:
        cos, sin = (c[t].double()[None, None] for c in rec.rotary[layer])  # (1, 1, d)
        rotate = sys.modules[type(adapter.attention(layer)).__module__].apply_rotary_pos_emb
        as_queries = projected[:, None, None]  # (P, 1, 1, d): P rows of one head at one position
        projected = rotate(as_queries, as_queries, cos, sin)[0].reshape(len(projected), -1)
    real = (rec.q[layer][head] if which == "q" else rec.k[layer][head])[t]
    check_close(projected.sum(0), real, "query" if which == "q" else "key")
    return names, projected


def why_here(rec: Recorded, layer: int, head: int, i: int, j: int) -> ScoreSplit:
    """Split head ``head`` of ``layer``'s score of query ``i`` against key ``j`` (0-based)."""
    check_cell(rec, layer, head, i, j)
    adapter = check_split(rec)
    query_names, queries = side(adapter, rec, layer, "q", head, i)
    key_names, keys = side(adapter, rec, layer, "k", rec.kv_head(head), j)
    pairs = (queries @ keys.T * rec.scaling[layer]).numpy()
    real = (
        float(rec.q[layer][head, i].double() @ rec.k[layer][rec.kv_head(head), j].double())
        * rec.scaling[layer]
    )
    return ScoreSplit(real, tuple(query_names), tuple(key_names), pairs)
