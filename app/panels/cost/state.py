"""The Cost panel's states and computations, Qt-free: the cost calculator, the handshake room,
FlashAttention tile by tile, and sparse patterns. Each ``compute_*`` raises ValueError with a
message for bad settings.

    compute_cost(CostState(n=4_096)).cost.article_flops   # the second article's count
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from core.maths.attention import AttentionTrace, attend
from core.maths.complexity import (
    MEMORY_SIZES,
    MIB,
    AttentionCost,
    MemoryHeld,
    attention_cost,
    first_length_exceeding,
    handshake_pairs,
    handshakes,
    pattern_cells,
    tiled_memory,
)
from core.maths.flash import FlashTrace, tiled_attention
from core.maths.masks import causal as causal_mask
from core.maths.masks import global_local

N_MIN, N_MAX = 128, 2**20
GRID_POINTS = 61  # lengths on the plots' axis, evenly spaced on a log scale
N_GRID = np.unique(np.round(np.geomspace(N_MIN, N_MAX, GRID_POINTS)).astype(int)).tolist()
ARTICLE_LENGTHS = (128, 512, 1_024, 4_096, 16_384, 65_536)  # the rows of the second article's table
PATTERN_PICTURE_N = 48  # tokens in the small picture of the sparse pattern


def mib_text(n_bytes: int) -> str:
    """MiB as in the article's table, but exact below 1 MiB (0.0625 rather than 0.1)."""
    value = n_bytes / MIB
    return f"{value:,.1f}" if value >= 1 else f"{value:.4g}"


def percent(part: int, whole: int) -> str:
    """part / whole as a percentage with three significant digits: "0.391 %"."""
    return f"{100 * part / whole:.3g} %"


def grid_with(n: int) -> list[int]:
    """The plots' lengths from N_MIN to N_MAX, with ``n`` among them."""
    return sorted({*N_GRID, n})


# --- 1. Cost calculator -----------------------------------------------------------------------
@dataclass(frozen=True)
class CostState:
    n: int = 4_096
    d_model: int = 512
    heads: int = 1
    layers: int = 1
    batch: int = 1
    dtype: str = "fp32"
    causal: bool = False


ARTICLE = CostState()  # the second article's settings: d_model 512, one head and layer, fp32


@dataclass(frozen=True)
class CostResult:
    cost: AttentionCost  # at n
    grid: list[int]  # (g,) lengths of the curves
    flops: dict[str, list[int]]  # curve -> (g,) whole-model FLOPs: qkv, quadratic, article, benchmark
    memory: dict[str, list[int]]  # curve -> (g,) score-matrix bytes: head, layer, model
    crossing_n: list[int]  # per MEMORY_SIZES: the first n whose model's score matrices exceed it
    table: list[tuple[str, str, str, str]]  # the article's table for these settings, one row per length


def compute_cost(s: CostState) -> CostResult:
    def at(n: int) -> AttentionCost:
        return attention_cost(n, s.d_model, s.heads, s.causal, layers=s.layers, batch=s.batch, dtype=s.dtype)

    cost = at(s.n)
    grid = grid_with(s.n)
    costs = [at(n) for n in grid]
    flops = {
        "qkv": [c.qkv_flops_model for c in costs],
        "quadratic": [c.quadratic_flops_model for c in costs],
        "article": [c.article_flops_model for c in costs],
        "benchmark": [c.benchmark_flops_model for c in costs],
    }
    memory = {
        "head": [c.score_bytes_per_head for c in costs],
        "layer": [c.score_bytes_per_layer for c in costs],
        "model": [c.score_bytes_model for c in costs],
    }
    crossing = [first_length_exceeding(size, cost.score_bytes_per_token_pair) for _, size in MEMORY_SIZES]
    table = []
    for n in ARTICLE_LENGTHS:
        c = attention_cost(n, s.d_model, s.heads, s.causal, dtype=s.dtype)
        table.append(
            (f"{n:,}", f"{c.article_flops:,}", f"{c.benchmark_flops:,}", mib_text(c.score_bytes_per_head))
        )
    return CostResult(cost, grid, flops, memory, crossing, table)


# --- 2. Handshakes ------------------------------------------------------------------------------
@dataclass(frozen=True)
class HandshakeState:
    people: int = 10


@dataclass(frozen=True)
class HandshakeResult:
    n: int
    seats: np.ndarray  # (n, 2) x, y of each person on a circle, the first at the top
    ends: np.ndarray  # (2·pairs,) seat indices: start and end of each handshake's line
    now: int  # handshakes among n
    doubled: int  # handshakes among 2n


def compute_handshakes(s: HandshakeState) -> HandshakeResult:
    n = s.people
    angle = np.pi / 2 - 2 * np.pi * np.arange(n) / n
    i, j = handshake_pairs(n)
    ends = np.column_stack([i, j]).ravel()
    return HandshakeResult(
        n, np.column_stack([np.cos(angle), np.sin(angle)]), ends, handshakes(n), handshakes(2 * n)
    )


# --- 3. FlashAttention tile by tile --------------------------------------------------------------
@dataclass(frozen=True)
class FlashState:
    n: int = 16
    d: int = 4
    block_q: int = 4
    block_k: int = 4
    causal: bool = False
    seed: int = 0


@dataclass(frozen=True)
class FlashResult:
    state: FlashState
    trace: FlashTrace  # every tile step of the tiled computation
    naive: AttentionTrace  # plain attention on the same Q, K, V
    error: float  # max |tiled output − naive output|
    held: MemoryHeld


def compute_flash(s: FlashState) -> FlashResult:
    rng = np.random.default_rng(s.seed)
    Q, K, V = (rng.normal(size=(s.n, s.d)) for _ in range(3))
    mask = causal_mask(s.n) if s.causal else None
    trace = tiled_attention(Q, K, V, s.block_q, s.block_k, mask=mask)
    naive = attend(Q, K, V, mask=mask)
    error = float(np.abs(trace.output - naive.output).max())
    return FlashResult(s, trace, naive, error, tiled_memory(s.n, s.n, s.d, s.block_q, s.block_k))


# --- 4. Sliding window and sparse patterns --------------------------------------------------------
@dataclass(frozen=True)
class SparseState:
    n: int = 4_096
    window: int = 8
    n_global: int = 2
    causal: bool = False


PATTERNS = {"full": "full attention", "window": "window", "global": "window + global"}


@dataclass(frozen=True)
class SparseResult:
    state: SparseState
    picture: np.ndarray  # (PATTERN_PICTURE_N, PATTERN_PICTURE_N) bool: the pattern, small
    grid: list[int]  # (g,)
    cells: dict[str, list[int]]  # pattern (a key of PATTERNS) -> (g,) cells computed
    now: dict[str, int]  # pattern -> cells at n


def sparse_cells(s: SparseState, n: int) -> dict[str, int]:
    """Cells computed at length ``n`` by full attention, the window, and the window + global tokens."""
    return {
        "full": pattern_cells(n, n, 0, s.causal),
        "window": pattern_cells(n, s.window, 0, s.causal),
        "global": pattern_cells(n, s.window, s.n_global, s.causal),
    }


def compute_sparse(s: SparseState) -> SparseResult:
    if s.n_global > PATTERN_PICTURE_N:
        raise ValueError(f"Choose at most {PATTERN_PICTURE_N} global tokens.")
    picture = global_local(PATTERN_PICTURE_N, s.window, range(s.n_global), causal=s.causal)
    now = sparse_cells(s, s.n)
    grid = grid_with(s.n)
    table = [sparse_cells(s, n) for n in grid]
    cells = {key: [t[key] for t in table] for key in PATTERNS}
    return SparseResult(s, picture, grid, cells, now)
