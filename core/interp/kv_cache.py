"""What a decoder's KV cache holds and how big it gets, from the model's config: grouped-query
attention's saving and the sliding-window layers that let old tokens go.

    size = cache_size(model, 512)   # size.total bytes, size.per_token, size.saving
    query_groups(9, 3)              # [[0, 1, 2], [3, 4, 5], [6, 7, 8]]: the query heads of each kv head
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from core.models.kinds import LoadedModel

FROM_PROMPT, FROM_DECODING, LET_GO = 1.0, 0.55, 0.0  # a cached token in kept_cells


@dataclass(frozen=True)
class CacheSize:
    """Bytes the KV cache takes per token and in total, with grouped-query attention and without."""

    tokens: int
    kept: tuple[int, ...]  # tokens each layer keeps: all, or a sliding-window layer's last window − 1
    per_layer: int  # bytes per token in one layer: 2 (keys, values) · kv_heads · head_dim · bytes
    groups: int  # query heads per key/value head
    bytes_per_value: int

    @property
    def per_token(self) -> int:
        """Bytes per token with every layer keeping it."""
        return self.per_layer * len(self.kept)

    @property
    def per_token_full(self) -> int:
        """The same with as many key/value heads as query heads."""
        return self.per_token * self.groups

    @property
    def total(self) -> int:
        return self.per_layer * sum(self.kept)

    @property
    def total_full(self) -> int:
        return self.total * self.groups

    @property
    def saving(self) -> float:
        """How many times smaller grouped-query attention makes the cache (query / kv heads)."""
        return float(self.groups)


def cache_size(model: LoadedModel, tokens: int, bytes_per_value: int = 4) -> CacheSize:
    """The KV cache transformers keeps for ``tokens`` tokens, from the model's config: every
    layer keeps every token, a sliding-window layer only the last window − 1 (the new token's
    query sees those and itself). 4 bytes = float32, as run here."""
    kept = tuple(
        min(tokens, model.window - 1) if layer in model.sliding else tokens for layer in range(model.n_layers)
    )
    per_layer = 2 * model.n_kv_heads * model.head_dim * bytes_per_value
    return CacheSize(tokens, kept, per_layer, model.n_heads // model.n_kv_heads, bytes_per_value)


def kept_cells(size: CacheSize, prompt: int) -> np.ndarray:
    """(layers, tokens) what each layer's cache holds after a prompt of ``prompt`` tokens: FROM_PROMPT,
    FROM_DECODING, or LET_GO where a sliding-window layer has dropped the token (the panel's shades)."""
    cells = np.full((len(size.kept), size.tokens), FROM_PROMPT)
    cells[:, prompt:] = FROM_DECODING
    for layer, kept in enumerate(size.kept):
        cells[layer, : size.tokens - kept] = LET_GO
    return cells


def size_curve(model, points: int = 50) -> tuple[np.ndarray, np.ndarray]:
    """(lengths, MiB) the cache's size from 0 to the model's context, (points, 2): shared key/value
    heads, then one per query head."""
    lengths = np.linspace(0, max(model.max_tokens, 1), points).round()
    sizes = [cache_size(model, int(n)) for n in lengths]
    return lengths, np.array([[s.total, s.total_full] for s in sizes]) / 2**20


def kv_head_of(n_heads: int, n_kv_heads: int) -> np.ndarray:
    """(n_heads,) the key/value head each query head reads: query heads h·g … h·g + g − 1 share
    kv head h, with g = n_heads / n_kv_heads (the order transformers' ``repeat_kv`` uses)."""
    if n_kv_heads < 1 or n_heads % n_kv_heads:
        raise ValueError(f"{n_heads} query heads cannot share {n_kv_heads} key/value heads evenly.")
    return np.arange(n_heads) // (n_heads // n_kv_heads)


def query_groups(n_heads: int, n_kv_heads: int) -> list[list[int]]:
    """For each key/value head, the query heads that share it."""
    owner = kv_head_of(n_heads, n_kv_heads)
    return [np.flatnonzero(owner == g).tolist() for g in range(n_kv_heads)]


__all__ = [
    "FROM_DECODING",
    "FROM_PROMPT",
    "LET_GO",
    "CacheSize",
    "cache_size",
    "kept_cells",
    "kv_head_of",
    "query_groups",
    "size_curve",
]
