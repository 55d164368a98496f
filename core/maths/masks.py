"""Attention masks as boolean matrices (n_q, n_k): True = the query may attend to the key.

This is the same sense as torch's ``scaled_dot_product_attention`` boolean ``attn_mask``.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from core.maths.attention import check_matrix, softmax

__all__ = [
    "KINDS", "AdditiveOutcome", "MaskCost", "MaskSpec", "additive", "additive_outcome", "build",
    "causal", "combine", "cost", "empty_rows", "full", "global_local", "leaked_weight",
    "next_token_weight", "padding", "resized_grid", "sliding_window"
]  # fmt: skip


def _check_n(n: int) -> int:
    if int(n) != n or n < 1:
        raise ValueError(f"A mask needs at least one position, got n = {n}.")
    return int(n)


def _check_mask(mask: np.ndarray) -> np.ndarray:
    mask = np.asarray(mask)
    if mask.ndim != 2 or mask.size == 0:
        raise ValueError(f"A mask must be a non-empty (n_q, n_k) grid, got shape {mask.shape}.")
    if mask.dtype != bool:
        raise ValueError("A mask must hold True (may attend) / False (hidden) values.")
    return mask


def full(n_q: int, n_k: int | None = None) -> np.ndarray:
    """Everything allowed (bidirectional, encoder style). (n_q, n_k)"""
    return np.ones((_check_n(n_q), _check_n(n_k if n_k is not None else n_q)), dtype=bool)


def causal(n: int) -> np.ndarray:
    """Each position sees itself and earlier ones (decoder style). (n, n)"""
    n = _check_n(n)
    return np.tril(np.ones((n, n), dtype=bool))


def padding(valid) -> np.ndarray:
    """Keys marked invalid (padding) are hidden from every query. valid (n,) bool -> (n, n)"""
    valid = np.asarray(valid, dtype=bool)
    if valid.ndim != 1 or valid.size == 0:
        raise ValueError("padding() needs one flag per position.")
    return np.broadcast_to(valid, (valid.size, valid.size)).copy()


def sliding_window(n: int, window: int, causal: bool = True) -> np.ndarray:
    """Each query sees keys less than ``window`` positions away (and, if causal, not later). (n, n)

    With causal=True a query sees itself and the window − 1 keys before it (Mistral style);
    otherwise it sees up to window − 1 keys on each side.
    """
    n = _check_n(n)
    if int(window) != window or window < 1:
        raise ValueError(f"The window must be at least 1 position, got {window}.")
    offset = np.arange(n)[:, None] - np.arange(n)[None, :]  # query − key
    allowed = np.abs(offset) < window
    return allowed & (offset >= 0) if causal else allowed


def global_local(n: int, window: int, global_idx, causal: bool = False) -> np.ndarray:
    """A local window plus global tokens that see, and are seen by, every position. (n, n)

    Longformer/BigBird style; ``global_idx`` lists the global positions.
    """
    m = sliding_window(n, window, causal=causal)
    listed = [int(i) for i in global_idx]
    if any(not 0 <= i < n for i in listed):  # checked as Python ints: a huge one cannot overflow
        raise ValueError(f"Global positions must lie in 0 … {n - 1}, got {listed}.")
    idx = np.asarray(listed, dtype=int)
    m[idx, :] = True
    m[:, idx] = True
    return m


def combine(*masks: np.ndarray) -> np.ndarray:
    """Logical AND of masks of equal shape: a cell is allowed only if every mask allows it."""
    if not masks:
        raise ValueError("combine() needs at least one mask.")
    shapes = {np.shape(m) for m in masks}
    if len(shapes) != 1:
        raise ValueError(f"Masks must share one shape, got {sorted(shapes)}.")
    return np.logical_and.reduce([np.asarray(m, dtype=bool) for m in masks])


def empty_rows(mask: np.ndarray) -> np.ndarray:
    """Indices of query rows that may attend to nothing (their weights will be all zero)."""
    return np.flatnonzero(~np.asarray(mask, dtype=bool).any(axis=-1))


@dataclass(frozen=True)
class MaskCost:
    """How many score cells a mask needs computed, against the full n_q × n_k grid."""

    per_row: np.ndarray  # (n_q,)  allowed keys of each query
    computed: int  # allowed cells in all
    total: int  # n_q · n_k

    @property
    def fraction(self) -> float:
        """Share of the full grid that is computed, 0 … 1."""
        return self.computed / self.total

    @property
    def saving(self) -> float:
        """Share of the full grid that a kernel skipping forbidden cells need not compute."""
        return 1.0 - self.fraction


def cost(mask: np.ndarray) -> MaskCost:
    """Computed cells of ``mask`` (n_q, n_k) per row and in total."""
    mask = _check_mask(mask)
    per_row = mask.sum(axis=-1)
    return MaskCost(per_row, int(per_row.sum()), mask.size)


def leaked_weight(weights: np.ndarray, mask: np.ndarray) -> np.ndarray:
    """Weight each query row puts on keys the mask forbids. (n_q, n_k) -> (n_q,)

    With a boolean mask applied as −∞ this is exactly 0; with a finite additive mask it is not.
    """
    mask = _check_mask(mask)
    weights = np.asarray(weights, dtype=np.float64)
    if weights.shape != mask.shape:
        raise ValueError(f"Weights {weights.shape} and mask {mask.shape} must share one shape.")
    return np.where(mask, 0.0, weights).sum(axis=-1)


def next_token_weight(weights: np.ndarray) -> np.ndarray:
    """Weight each position i puts on position i + 1, the token it is trained to predict.

    (n, n) -> (n − 1,). Without a causal mask this is the "copying the answer" leak;
    with one it is exactly 0.
    """
    weights = np.asarray(weights, dtype=np.float64)
    if weights.ndim != 2 or weights.shape[0] != weights.shape[1] or weights.shape[0] < 2:
        raise ValueError(
            f"Next-token weight needs square self-attention weights of at least 2 tokens, "
            f"got shape {weights.shape}."
        )
    return np.diagonal(weights, offset=1).copy()


def additive(mask: np.ndarray, fill: float) -> np.ndarray:
    """The mask as a bias added to the scores: 0 where allowed, ``fill`` where forbidden.

    mask (n_q, n_k) bool -> (n_q, n_k) float64. ``fill`` is −inf or a negative number
    such as −1e9 (common in code) or −10 (too small: weight leaks through).
    """
    mask = _check_mask(mask)
    fill = float(fill)
    if np.isnan(fill) or fill >= 0:
        raise ValueError(f"An additive mask needs a negative fill value (or −inf), got {fill}.")
    return np.where(mask, 0.0, fill)


@dataclass(frozen=True)
class AdditiveOutcome:
    """Softmax of scaled scores plus an additive mask, and what got through."""

    fill: float  # the value added to forbidden cells
    logits: np.ndarray  # (n_q, n_k)  scaled + additive(mask, fill)
    weights: np.ndarray  # (n_q, n_k)  row softmax of logits (core's safe softmax)
    leak: np.ndarray  # (n_q,)  weight on forbidden keys per row
    row_max: np.ndarray  # (n_q,)  max of each logits row, the textbook softmax's shift
    textbook_nan: np.ndarray  # (n_q,) bool  rows where logits − row_max is −∞ − (−∞) = NaN


def additive_outcome(scaled: np.ndarray, mask: np.ndarray, fill: float) -> AdditiveOutcome:
    """Apply ``mask`` to ``scaled`` (n_q, n_k) by adding ``fill`` to forbidden cells.

    The weights come from core's softmax, which gives a row with nothing allowed zeros.
    ``textbook_nan`` marks the rows where the textbook recipe (subtract the row max, then
    exponentiate) meets −∞ − (−∞) and turns the whole row into NaN: fully masked rows with −inf.
    """
    scaled = check_matrix("Scaled scores", scaled)
    if np.shape(mask) != scaled.shape:
        raise ValueError(f"Mask shape {np.shape(mask)} does not match scores {scaled.shape}.")
    logits = scaled + additive(mask, fill)
    row_max = logits.max(axis=-1)
    with np.errstate(invalid="ignore"):  # −inf − (−inf) is the NaN this field reports
        textbook_nan = np.isnan(logits - row_max[:, None]).any(axis=-1)
    weights = softmax(logits, axis=-1)
    leak = leaked_weight(weights, mask)
    return AdditiveOutcome(float(fill), logits, weights, leak, row_max, textbook_nan)


KINDS = ("none", "causal", "sliding_window", "global_local", "custom")


@dataclass(frozen=True)
class MaskSpec:
    """A self-attention mask described by a few choices, as a panel or a script sets them.

    kind: one of KINDS. window / symmetric: the sliding or local window (symmetric = both
    sides, otherwise causal). global_idx: global positions for "global_local". n_pad: how
    many trailing tokens are padding (combined with the kind by logical AND). custom: an
    (n, n) bool grid for "custom".
    """

    kind: str = "causal"
    window: int = 3
    symmetric: bool = False
    global_idx: tuple[int, ...] = (0,)
    n_pad: int = 0
    custom: np.ndarray | None = None


def build(spec: MaskSpec, n: int) -> np.ndarray:
    """The (n, n) bool mask that ``spec`` describes for n tokens."""
    n = _check_n(n)
    if spec.kind not in KINDS:
        raise ValueError(f"Unknown mask kind {spec.kind!r}; choose one of {', '.join(KINDS)}.")
    if not 0 <= spec.n_pad <= n:
        raise ValueError(f"Padding must cover 0 … {n} trailing tokens, got {spec.n_pad}.")
    if spec.kind in ("sliding_window", "global_local") and not 1 <= spec.window <= n:
        raise ValueError(f"The window must be 1 … {n} positions (the sentence length), got {spec.window}.")
    if spec.kind == "none":
        base = full(n)
    elif spec.kind == "causal":
        base = causal(n)
    elif spec.kind == "sliding_window":
        base = sliding_window(n, spec.window, causal=not spec.symmetric)
    elif spec.kind == "global_local":
        base = global_local(n, spec.window, spec.global_idx, causal=not spec.symmetric)
    else:
        if spec.custom is None or np.shape(spec.custom) != (n, n):
            raise ValueError(f"A custom mask needs an ({n}, {n}) grid, one cell per query and key.")
        base = _check_mask(spec.custom).copy()
    if spec.n_pad == 0:
        return base
    return combine(base, padding(np.arange(n) < n - spec.n_pad))


def resized_grid(grid: np.ndarray | None, n: int) -> np.ndarray:
    """A custom (n, n) mask that keeps ``grid``'s pattern where the two overlap; new rows and
    columns start causal (the default a grid starts from)."""
    out = causal(n)
    if grid is not None:
        k = min(n, grid.shape[0])
        out[:k, :k] = grid[:k, :k]
    return out
