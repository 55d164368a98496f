"""The Multi-head panel's one state (shared by every step) and its computation, Qt-free.

r = compute_multihead(MultiHeadState())   # the article's example: 8 tokens, d_model 32, 4 heads
r.trace.heads[0].weights                  # (8, 8)
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from core.maths import masks
from core.maths.multihead import (
    HeadTable,
    MultiHeadTrace,
    RandomWeights,
    SplitCost,
    attend_heads,
    check_heads,
    head_table,
    project_heads,
    random_weights,
    split_cost,
)
from core.maths.qkv import tokenize

MAX_HEADS = 16  # more heads than this do not fit on screen as separate heatmaps
MAX_TOKENS = 128
MAX_D_MODEL = 512
MASKS = {  # short names (the mask box must not widen the control column at large text): the
    # core.maths.masks function and its arguments after n, or None for no mask
    "none": None,
    "causal": (masks.causal,),
    "causal window of 3": (masks.sliding_window, 3),
    "local ±1 + first token": (masks.global_local, 2, [0]),
}


def build_mask(name: str, n: int) -> np.ndarray | None:
    """The (n, n) bool mask ``name`` (a key of MASKS) stands for; None for no mask."""
    if MASKS[name] is None:
        return None
    make, *args = MASKS[name]
    return make(n, *args)


@dataclass(frozen=True)
class MultiHeadState:
    """The article's multi-head example: seed 42, 8 tokens, d_model 32, 4 heads, weights × 0.1."""

    text: str = "the trophy would not fit into my suitcase"
    d_model: int = 32
    heads: int = 4
    seed: int = 42
    scale: float = 0.1
    temperature: float = 1.0
    mask: str = "none"  # a key of MASKS


@dataclass(frozen=True)
class MultiHeadResult:
    tokens: list[str]  # (n,)
    trace: MultiHeadTrace
    W_O: np.ndarray  # (d_model, d_model)
    table: HeadTable  # per-head statistics
    one: SplitCost  # the work of one head of width d_model
    split: SplitCost  # the work of h heads of width d_model / h

    @property
    def d_k(self) -> int:
        return self.W_O.shape[0] // len(self.trace.heads)


@lru_cache(maxsize=2)
def _draws(tokens: tuple[str, ...], d_model: int, seed: int) -> RandomWeights:
    """The random draws depend only on these three settings; a new head count regroups them."""
    return random_weights(np.random.default_rng(seed), tokens, d_model)


@lru_cache(maxsize=4)
def _projections(tokens: tuple[str, ...], d_model: int, seed: int, heads: int, scale: float):
    """(queries, keys, values) and W_O; a temperature or mask change reuses them."""
    draws = _draws(tokens, d_model, seed)
    W_Q, W_K, W_V, W_O = draws.split(heads, scale)
    return project_heads(draws.X, W_Q, W_K, W_V), W_O


def compute_multihead(s: MultiHeadState) -> MultiHeadResult:
    tokens = tokenize(s.text, MAX_TOKENS)
    if not 1 <= s.d_model <= MAX_D_MODEL:
        raise ValueError(f"Choose d_model between 1 and {MAX_D_MODEL}.")
    check_heads(s.d_model, s.heads, MAX_HEADS)
    if s.mask not in MASKS:
        raise ValueError(f"Choose a mask among {', '.join(MASKS)}.")
    projections, W_O = _projections(tuple(tokens), s.d_model, s.seed, s.heads, s.scale)
    trace = attend_heads(*projections, W_O, mask=build_mask(s.mask, len(tokens)), temperature=s.temperature)
    n = len(tokens)
    return MultiHeadResult(
        tokens, trace, W_O, head_table(trace), split_cost(n, s.d_model, 1), split_cost(n, s.d_model, s.heads)
    )
