"""What attention costs as the sequence grows: FLOPs, score-matrix memory, sparse patterns.

Every count is a Python int, so nothing overflows however long the sequence.

Two FLOP conventions appear side by side:

* the second article's count, where one multiply-add is one operation:
  QKV projections 3·n·d_model², scores n²·d_model, weighted sum n²·d_model;
* the FlashAttention benchmark count, where a multiply and an add are two operations and only the
  two quadratic matrix products are counted: 4·n²·d·h (d = head width, h = heads), halved when
  causal because a causal kernel skips the hidden half.
"""

from __future__ import annotations

import math
import operator
from dataclasses import dataclass

import numpy as np

__all__ = [
    "DTYPE_BYTES", "GIB", "MEMORY_SIZES", "MIB", "AttentionCost", "MemoryHeld", "attention_cost",
    "first_length_exceeding", "handshake_pairs", "handshakes", "loglog_slope", "pattern_cells",
    "tiled_memory", "window_cells"
]  # fmt: skip

DTYPE_BYTES = {"fp32": 4, "bf16": 2, "fp8": 1}

GIB = 2**30
MIB = 2**20

MEMORY_SIZES = (  # (label, bytes) — common places the score matrices have to fit
    ("16 GiB laptop RAM", 16 * GIB),
    ("24 GiB GPU", 24 * GIB),
    ("80 GiB GPU", 80 * GIB),
    ("141 GiB GPU", 141 * GIB),
)


def _whole(name: str, value, minimum: int = 1) -> int:
    """``value`` as a Python int ≥ minimum, or a ValueError saying what to enter."""
    try:
        number = operator.index(value)
    except TypeError:
        raise ValueError(f"{name} must be a whole number, got {value!r}.") from None
    if isinstance(value, bool) or number < minimum:
        raise ValueError(f"{name} must be a whole number of at least {minimum}, got {value!r}.")
    return int(number)


@dataclass(frozen=True)
class AttentionCost:
    """Cost of one attention layer (all heads) for one sequence, and of the whole model."""

    n: int
    d_model: int
    heads: int
    causal: bool
    layers: int
    batch: int
    dtype: str
    qkv_flops: int  # article: 3·n·d_model² multiply-adds (linear in n)
    score_flops: int  # article: n²·d_model multiply-adds (Q·Kᵀ over all heads)
    weighted_sum_flops: int  # article: n²·d_model multiply-adds (weights·V over all heads)
    benchmark_flops: int  # 4·n²·d_head·heads, halved when causal
    score_bytes_per_head: int  # one n × n score matrix in ``dtype``

    @property
    def d_head(self) -> int:
        return self.d_model // self.heads

    @property
    def article_flops(self) -> int:
        """The second article's total for one layer: projections + scores + weighted sum."""
        return self.qkv_flops + self.score_flops + self.weighted_sum_flops

    @property
    def quadratic_flops(self) -> int:
        """The article's two n² terms, in multiply-adds."""
        return self.score_flops + self.weighted_sum_flops

    @property
    def score_bytes_per_layer(self) -> int:
        return self.score_bytes_per_head * self.heads * self.batch

    @property
    def score_bytes_per_token_pair(self) -> int:
        """Bytes the whole model's score matrices take per (query, key) pair."""
        return self.score_bytes_per_head * self.heads * self.batch * self.layers // (self.n * self.n)

    @property
    def score_bytes_model(self) -> int:
        """Every layer's score matrices held at once, as a naive forward pass for training does."""
        return self.score_bytes_per_layer * self.layers

    @property
    def article_flops_model(self) -> int:
        return self.article_flops * self.layers * self.batch

    @property
    def qkv_flops_model(self) -> int:
        """The projections' multiply-adds over every layer and sequence of the batch."""
        return self.qkv_flops * self.layers * self.batch

    @property
    def quadratic_flops_model(self) -> int:
        """The n² terms' multiply-adds over every layer and sequence of the batch."""
        return self.quadratic_flops * self.layers * self.batch

    @property
    def benchmark_flops_model(self) -> int:
        return self.benchmark_flops * self.layers * self.batch


def attention_cost(
    n: int,
    d_model: int,
    heads: int = 1,
    causal: bool = False,
    *,
    layers: int = 1,
    batch: int = 1,
    dtype: str = "fp32",
) -> AttentionCost:
    """FLOPs and score-matrix bytes of self-attention over ``n`` tokens.

    The article's count does not change with ``causal``: a plain implementation computes every
    cell and then hides half of them. ``heads`` must divide ``d_model``.
    """
    n = _whole("The sequence length n", n)
    d_model = _whole("d_model", d_model)
    heads = _whole("The number of heads", heads)
    layers = _whole("The number of layers", layers)
    batch = _whole("The batch size", batch)
    if d_model % heads:
        raise ValueError(f"d_model = {d_model} must be divisible by the {heads} heads.")
    if dtype not in DTYPE_BYTES:
        raise ValueError(f"dtype must be one of {', '.join(DTYPE_BYTES)}, got {dtype!r}.")
    d_head = d_model // heads
    benchmark = 4 * n * n * d_head * heads
    return AttentionCost(
        n=n,
        d_model=d_model,
        heads=heads,
        causal=bool(causal),
        layers=layers,
        batch=batch,
        dtype=dtype,
        qkv_flops=3 * n * d_model * d_model,
        score_flops=n * n * d_model,
        weighted_sum_flops=n * n * d_model,
        benchmark_flops=benchmark // 2 if causal else benchmark,
        score_bytes_per_head=n * n * DTYPE_BYTES[dtype],
    )


def first_length_exceeding(limit_bytes: int, bytes_per_token_pair: int) -> int:
    """Smallest n whose n² · ``bytes_per_token_pair`` is larger than ``limit_bytes``."""
    limit_bytes = _whole("The memory size", limit_bytes)
    per_pair = _whole("Bytes per score", bytes_per_token_pair)
    return math.isqrt(limit_bytes // per_pair) + 1


def loglog_slope(x, y) -> np.ndarray:
    """Local slope d log y / d log x at each point: 1 is linear growth, 2 quadratic. (len(x),)"""
    x, y = np.asarray(x, dtype=np.float64), np.asarray(y, dtype=np.float64)
    if x.shape != y.shape or x.ndim != 1 or x.size < 2:
        raise ValueError("The slope needs two equal-length 1-D sequences of at least 2 points.")
    if np.any(x <= 0) or np.any(y <= 0):
        raise ValueError("A log-log slope needs positive values.")
    return np.gradient(np.log(y), np.log(x))


def handshakes(n: int) -> int:
    """Distinct pairs among n people: n(n−1)/2."""
    n = _whole("The number of people", n, minimum=0)
    return n * (n - 1) // 2


def handshake_pairs(n: int) -> tuple[np.ndarray, np.ndarray]:
    """Every pair (i, j) with i < j, as two index arrays of length n(n−1)/2."""
    n = _whole("The number of people", n, minimum=0)
    return np.triu_indices(n, k=1)


def _capped_sum(n: int, cap: int) -> int:
    """Σ_{i=0}^{n−1} min(i, cap)."""
    if cap >= n - 1:
        return n * (n - 1) // 2
    return cap * (cap + 1) // 2 + (n - 1 - cap) * cap


def window_cells(n: int, window: int, causal: bool = True) -> int:
    """Cells a sliding-window mask allows, the same pattern as ``core.maths.masks.sliding_window``."""
    n = _whole("The sequence length n", n, minimum=0)
    window = _whole("The window", window)
    if causal:  # row i sees min(i + 1, window) keys
        return _capped_sum(n + 1, window)
    return n + 2 * _capped_sum(n, window - 1)  # row i sees itself and ≤ window − 1 each side


def pattern_cells(n: int, window: int, n_global: int = 0, causal: bool = False) -> int:
    """Cells computed by a local window plus ``n_global`` global tokens (the first positions).

    The same pattern as ``core.maths.masks.global_local(n, window, range(n_global), causal)``:
    global tokens see, and are seen by, every position.
    """
    n = _whole("The sequence length n", n)
    n_global = _whole("The number of global tokens", n_global, minimum=0)
    if n_global > n:
        raise ValueError(f"There can be at most n = {n} global tokens, got {n_global}.")
    crossing = 2 * n_global * n - n_global * n_global  # full rows and columns of global tokens
    return crossing + window_cells(n - n_global, window, causal)


@dataclass(frozen=True)
class MemoryHeld:
    """Numbers (not bytes) one attention head keeps besides Q, K and V."""

    naive: int  # the whole n_q × n_k score matrix
    tile: int  # one block_q × block_k tile of scores
    running: int  # output accumulator plus m and l for every query row: n_q · (d_v + 2)

    @property
    def tiled(self) -> int:
        return self.tile + self.running


def tiled_memory(n_q: int, n_k: int, d_v: int, block_q: int, block_k: int) -> MemoryHeld:
    """What naive attention and tiled attention each hold while they run."""
    n_q, n_k = _whole("n_q", n_q), _whole("n_k", n_k)
    d_v = _whole("d_v", d_v)
    block_q, block_k = _whole("block_q", block_q), _whole("block_k", block_k)
    if block_q > n_q or block_k > n_k:
        raise ValueError(f"Tiles of {block_q} × {block_k} do not fit {n_q} queries × {n_k} keys.")
    return MemoryHeld(n_q * n_k, block_q * block_k, n_q * (d_v + 2))
