"""Multi-head attention: h soft lookups in parallel subspaces, joined by an output projection.

    head_i = attend(X·W_Q[i], X·W_K[i], X·W_V[i])          # (n, d_v) each
    concat = [head_0 | head_1 | … | head_{h−1}]             # (n, h·d_v)
    output = concat · W_O                                    # (n, d_model)

``multi_head`` keeps every head's ``AttentionTrace``. It runs ``project_heads`` then
``attend_heads``, so a view can redo only the second step when the temperature or the mask
changes. ``head_table`` summarises the heads the way the per-head statistics table does (mean
peak position, mean entropy, agreement), and ``split_cost`` counts the work of one wide head
against h narrow ones.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from core import inputs
from core.maths.attention import AttentionTrace, attend, check_matrix
from core.maths.qkv import vocabulary
from core.maths.stats import agreement, entropy, peak

__all__ = [
    "HeadTable", "MultiHeadTrace", "RandomWeights", "SplitCost", "attend_heads", "check_heads",
    "fitting_heads", "head_divisors", "head_table", "head_width", "multi_head", "parse_heads",
    "project_heads", "random_weights", "split_cost", "uniform_weights"
]  # fmt: skip


@dataclass(frozen=True)
class MultiHeadTrace:
    """Every step of one multi-head call. n tokens, h heads, head widths d_k and d_v."""

    queries: np.ndarray  # (h, n, d_k)  X·W_Q[i] for each head
    keys: np.ndarray  # (h, n, d_k)  X·W_K[i]
    values: np.ndarray  # (h, n, d_v)  X·W_V[i]
    heads: list[AttentionTrace]  # one trace per head
    concat: np.ndarray  # (n, h·d_v)  head outputs side by side, head 0 first
    output: np.ndarray  # (n, d_model)  concat · W_O

    @property
    def weights(self) -> np.ndarray:
        """All heads' attention weights stacked. (h, n, n)"""
        return np.stack([head.weights for head in self.heads])


def multi_head(
    X: np.ndarray,
    W_Q: np.ndarray,
    W_K: np.ndarray,
    W_V: np.ndarray,
    W_O: np.ndarray,
    mask: np.ndarray | None = None,
    temperature: float = 1.0,
) -> MultiHeadTrace:
    """Multi-head self-attention over the rows of X, every head kept.

    X (n, d_model); W_Q, W_K (h, d_model, d_k); W_V (h, d_model, d_v); W_O (h·d_v, d_model);
    mask (n, n) bool, True = may attend, shared by every head. Each head divides its scores
    by √d_k · temperature.
    """
    return attend_heads(*project_heads(X, W_Q, W_K, W_V), W_O, mask=mask, temperature=temperature)


def project_heads(
    X: np.ndarray, W_Q: np.ndarray, W_K: np.ndarray, W_V: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Every head's queries, keys and values: X·W_Q[i], X·W_K[i], X·W_V[i].

    X (n, d_model); W_Q, W_K (h, d_model, d_k); W_V (h, d_model, d_v)
    -> queries, keys (h, n, d_k) and values (h, n, d_v).
    """
    X = check_matrix("X", X)
    W_Q, W_K, W_V = (check_matrix(name, w, ndim=3) for name, w in (("W_Q", W_Q), ("W_K", W_K), ("W_V", W_V)))
    n, d_model = X.shape
    if n == 0 or d_model == 0:
        raise ValueError(f"X needs at least one token and one feature, got shape {X.shape}.")
    h = W_Q.shape[0]
    if h == 0:
        raise ValueError("Multi-head attention needs at least one head.")
    for name, w in (("W_Q", W_Q), ("W_K", W_K), ("W_V", W_V)):
        if w.shape[:2] != (h, d_model):
            raise ValueError(
                f"{name} must have shape (heads, d_model, width) = ({h}, {d_model}, …), "
                f"got {w.shape}; give every head one projection from the d_model features of X."
            )
    if W_K.shape[2] != W_Q.shape[2]:
        raise ValueError(f"W_Q and W_K need the same head width d_k, got {W_Q.shape[2]} and {W_K.shape[2]}.")
    return _project(X, W_Q), _project(X, W_K), _project(X, W_V)


def _project(X: np.ndarray, W: np.ndarray) -> np.ndarray:
    """X·W[i] for every head as one matrix product. X (n, d_model), W (h, d_model, w) -> (h, n, w)"""
    h, d_model, width = W.shape
    joined = W.transpose(1, 0, 2).reshape(d_model, h * width)  # heads side by side
    return (X @ joined).reshape(len(X), h, width).transpose(1, 0, 2)


def attend_heads(
    queries: np.ndarray,
    keys: np.ndarray,
    values: np.ndarray,
    W_O: np.ndarray,
    mask: np.ndarray | None = None,
    temperature: float = 1.0,
) -> MultiHeadTrace:
    """Attention in every head, the head outputs side by side, then W_O.

    queries, keys (h, n, d_k); values (h, n, d_v); W_O (h·d_v, d_model); mask (n, n) bool.
    A new temperature or mask needs only this step, not new projections.
    """
    h, _, d_v = values.shape
    W_O = check_matrix("W_O", W_O)
    if W_O.shape[0] != h * d_v:
        raise ValueError(
            f"W_O needs h·d_v = {h}·{d_v} = {h * d_v} rows (one per concatenated feature), "
            f"got {W_O.shape[0]}."
        )
    heads = [attend(queries[i], keys[i], values[i], mask=mask, temperature=temperature) for i in range(h)]
    concat = np.concatenate([head.output for head in heads], axis=-1)  # (n, h·d_v)
    return MultiHeadTrace(queries, keys, values, heads, concat, concat @ W_O)


def head_width(n: int, d_model: int, heads: int) -> int:
    """d_k = d_model / heads; ValueError if a size is below 1 or heads does not divide d_model."""
    if min(n, d_model, heads) < 1:
        raise ValueError("Tokens, d_model and heads must each be at least 1.")
    if d_model % heads:
        raise ValueError(f"{heads} heads do not divide d_model = {d_model}; choose a divisor of {d_model}.")
    return d_model // heads


@dataclass(frozen=True)
class RandomWeights:
    """Random embeddings and unscaled weights for any number of heads.

    The weight draws do not depend on the head count: h heads regroup the same d_model²
    numbers of each matrix, so changing h reshapes the weights instead of drawing new ones.
    """

    X: np.ndarray  # (n, d_model)  one standard normal row per distinct token, repeated
    draws: np.ndarray  # (4, d_model, d_model)  W_Q, W_K, W_V, W_O before scaling, in draw order

    def split(self, heads: int, scale: float = 0.1) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """W_Q, W_K, W_V (heads, d_model, d_k) and W_O (d_model, d_model), times ``scale``."""
        n, d_model = self.X.shape
        d_k = head_width(n, d_model, heads)
        if not (np.isfinite(scale) and scale > 0):
            raise ValueError(f"The weight scale must be a positive number, got {scale}.")
        W_Q, W_K, W_V = (w.reshape(heads, d_model, d_k) * scale for w in self.draws[:3])
        return W_Q, W_K, W_V, self.draws[3] * scale


def random_weights(rng: np.random.Generator, tokens: Sequence[str], d_model: int) -> RandomWeights:
    """Standard normal embeddings (a repeated token repeats its row), then the four weight draws.

    With distinct tokens, ``random_weights(rng, tokens, d).split(h, s)`` gives exactly
    X = rng.standard_normal((n, d)), then W_Q, W_K, W_V = rng.standard_normal((h, d, d // h)) · s
    and W_O = rng.standard_normal((d, d)) · s, in that order: with seed 42, 8 tokens, d_model 32,
    4 heads and scale 0.1 this is the multi-head example of the soft-retrieval article.
    """
    head_width(len(tokens), d_model, 1)  # at least one token and one feature
    vocab, index = vocabulary(list(tokens))
    table = rng.standard_normal((len(vocab), d_model))
    return RandomWeights(table[index], rng.standard_normal((4, d_model, d_model)))


@dataclass(frozen=True)
class HeadTable:
    """One row per head; means are over the query rows that may attend to at least one key."""

    mean_peak: np.ndarray  # (h,)  average position of each row's largest weight
    mean_entropy: np.ndarray  # (h,)  average row entropy in nats
    agreement_head0: np.ndarray  # (h,)  agreement(weights_i, weights_0)
    agreement_uniform: np.ndarray  # (h,)  agreement(weights_i, uniform over allowed keys)


def uniform_weights(mask: np.ndarray | None, n: int) -> np.ndarray:
    """Equal weight on each row's allowed keys; a row with nothing allowed is all zero. (n, n)"""
    allowed = np.ones((n, n), dtype=bool) if mask is None else np.asarray(mask, dtype=bool)
    counts = allowed.sum(axis=-1, keepdims=True)
    return np.divide(allowed, counts, out=np.zeros(allowed.shape), where=counts > 0)


def head_table(trace: MultiHeadTrace) -> HeadTable:
    """Per-head statistics: mean peak position, mean entropy, agreement with head 0 and uniform.

    Agreement is the mean over rows of Σ_j a_ij·b_ij. Against uniform weights it equals the
    mean of 1/(allowed keys per row), which is the level two unrelated heads would reach.
    """
    weights = trace.weights  # (h, n, n)
    n = weights.shape[-1]
    uniform = uniform_weights(trace.heads[0].mask, n)
    live = uniform.sum(axis=-1) > 0  # rows that attend to something
    if not live.any():
        raise ValueError("The mask hides every key from every query; allow at least one cell.")
    w = weights[:, live]  # (h, n_live, n)
    return HeadTable(
        mean_peak=peak(w)[0].mean(axis=-1),
        mean_entropy=entropy(w).mean(axis=-1),
        agreement_head0=np.array([agreement(wi, w[0]) for wi in w]),
        agreement_uniform=np.array([agreement(wi, uniform[live]) for wi in w]),
    )


@dataclass(frozen=True)
class SplitCost:
    """Work of multi-head self-attention with heads of width d_model / heads."""

    flops: dict[str, int]  # matrix-product FLOPs per step (2 per multiply-add), and "total"
    exponentials: int  # softmax cells, heads·n²: the one part that grows with the head count


def split_cost(n: int, d_model: int, heads: int) -> SplitCost:
    """Count the work of h heads of width d_k = d_v = d_model / h on n tokens.

    The matrix-product FLOPs are the same for every divisor h: splitting one wide head into h
    narrow ones reshapes the work without adding to it. Only the softmax runs h times.
    """
    d_k = head_width(n, d_model, heads)
    flops = {
        "projections Q, K, V": heads * 3 * 2 * n * d_model * d_k,
        "scores Q·Kᵀ": heads * 2 * n * n * d_k,
        "weights · V": heads * 2 * n * n * d_k,
        "output · W_O": 2 * n * (heads * d_k) * d_model,
    }
    flops["total"] = sum(flops.values())
    return SplitCost(flops, heads * n * n)


def head_divisors(d_model: int, most: int) -> list[int]:
    """Head counts up to ``most`` that split d_model evenly: head_divisors(32, 16) = [1, 2, 4, 8, 16]."""
    return [h for h in range(1, min(d_model, most) + 1) if d_model % h == 0]


def fitting_heads(d_model: int, heads: int, most: int) -> int:
    """The largest head count ≤ ``heads`` that divides d_model (for a d_model that changed)."""
    return max(h for h in head_divisors(d_model, most) if h <= heads)


def check_heads(d_model: int, heads: int, most: int) -> None:
    """ValueError saying what to choose unless ``heads`` divides d_model and is at most ``most``."""
    if heads < 1 or d_model % heads:
        offered = ", ".join(map(str, head_divisors(d_model, most)))
        raise ValueError(f"{heads} heads do not divide d_model = {d_model}; choose one of {offered}.")
    if heads > most:
        raise ValueError(f"At most {most} heads fit on screen; choose fewer.")


def parse_heads(text: str, d_model: int, most: int) -> int:
    """A typed head count, checked against d_model: parse_heads("4", 32, 16) = 4."""
    heads = inputs.whole(text, "Heads", 1, most)
    check_heads(d_model, heads, most)
    return heads
