"""Scaled dot-product attention, keeping every intermediate step.

    Attention(Q, K, V) = softmax(Q·Kᵀ / (√d_k · T)) · V

``attend`` returns an ``AttentionTrace`` so a view can show each of the four steps.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

__all__ = ["AttentionTrace", "attend", "check_matrix", "softmax"]


def softmax(x: np.ndarray, axis: int = -1) -> np.ndarray:
    """Numerically safe softmax along ``axis``; −inf entries get weight 0.

    A slice that is entirely −inf (nothing allowed) gets all zeros instead of NaN.
    """
    x = np.asarray(x, dtype=np.float64)
    top = np.max(x, axis=axis, keepdims=True)
    top = np.where(np.isfinite(top), top, 0.0)
    with np.errstate(over="ignore"):  # x − top may overflow to −inf, whose exp is exactly 0
        e = np.exp(x - top)
    total = e.sum(axis=axis, keepdims=True)
    return np.divide(e, total, out=np.zeros_like(e), where=total > 0)


@dataclass(frozen=True)
class AttentionTrace:
    """Every step of one attention call. Shapes: n_q queries, n_k keys, d_v value width."""

    scores: np.ndarray  # (n_q, n_k)  Q·Kᵀ
    scaled: np.ndarray  # (n_q, n_k)  scores / divisor
    masked: np.ndarray  # (n_q, n_k)  scaled with forbidden cells at −inf
    weights: np.ndarray  # (n_q, n_k)  row softmax of masked; each row sums to 1 (or 0 if empty)
    output: np.ndarray  # (n_q, d_v)  weights · V
    divisor: float  # √d_k · T, or T when scale=False
    mask: np.ndarray | None  # (n_q, n_k) bool, True = may attend


def check_matrix(name: str, m: np.ndarray, ndim: int = 2) -> np.ndarray:
    """Return ``m`` as float64, or raise ValueError naming the bad input (shape or non-finite)."""
    m = np.asarray(m, dtype=np.float64)
    if m.ndim != ndim:
        raise ValueError(f"{name} must be a {ndim}-D array, got shape {m.shape}.")
    if not np.all(np.isfinite(m)):
        raise ValueError(f"{name} contains NaN or infinity; every entry must be a finite number.")
    return m


def attend(
    Q: np.ndarray,
    K: np.ndarray,
    V: np.ndarray,
    mask: np.ndarray | None = None,
    temperature: float = 1.0,
    scale: bool = True,
) -> AttentionTrace:
    """Scaled dot-product attention with every step kept.

    Q (n_q, d_k), K (n_k, d_k), V (n_k, d_v); mask (n_q, n_k) bool, True = may attend.
    A query row with no allowed key gets zero weights and a zero output (never NaN).
    """
    Q, K, V = check_matrix("Q", Q), check_matrix("K", K), check_matrix("V", V)
    if Q.shape[1] != K.shape[1]:
        raise ValueError(f"Q and K need the same width d_k, got {Q.shape[1]} and {K.shape[1]}.")
    if K.shape[0] != V.shape[0]:
        raise ValueError(f"K and V need one row per key, got {K.shape[0]} and {V.shape[0]}.")
    if Q.shape[1] == 0:
        raise ValueError("d_k must be at least 1.")
    if not (np.isfinite(temperature) and temperature > 0):
        raise ValueError(f"Temperature must be a positive number, got {temperature}.")
    divisor = float(temperature) * (np.sqrt(Q.shape[1]) if scale else 1.0)
    scores = Q @ K.T
    scaled = scores / divisor
    if mask is None:
        masked = scaled
    else:
        mask = np.asarray(mask, dtype=bool)
        if mask.shape != scores.shape:
            raise ValueError(f"Mask shape {mask.shape} does not match scores {scores.shape}.")
        masked = np.where(mask, scaled, -np.inf)
    weights = softmax(masked, axis=-1)
    return AttentionTrace(scores, scaled, masked, weights, weights @ V, divisor, mask)
