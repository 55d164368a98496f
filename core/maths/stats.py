"""Summaries of attention weights, and the √d_k growth experiment."""

from __future__ import annotations

import numpy as np


def entropy(weights: np.ndarray) -> np.ndarray:
    """Shannon entropy in nats of each row. (..., n_k) -> (...,); 0 = one-hot, ln(n_k) = uniform."""
    w = np.asarray(weights, dtype=np.float64)
    logs = np.log(w, out=np.zeros_like(w), where=w > 0)
    return -(w * logs).sum(axis=-1)


def peak(weights: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Index and value of the largest weight of each row. (..., n_k) -> ((...,), (...,))"""
    w = np.asarray(weights, dtype=np.float64)
    idx = w.argmax(axis=-1)
    return idx, np.take_along_axis(w, idx[..., None], axis=-1)[..., 0]


def agreement(a: np.ndarray, b: np.ndarray) -> float:
    """Mean over rows of Σ_j a_ij·b_ij: how much two weight matrices put mass on the same keys."""
    a, b = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    if a.shape != b.shape:
        raise ValueError(f"agreement() needs equal shapes, got {a.shape} and {b.shape}.")
    return float((a * b).sum(axis=-1).mean())


def dot_product_growth(d, samples: int, rng: np.random.Generator) -> np.ndarray:
    """Standard deviation of q·k for random unit-variance q, k of each width in ``d``.

    d: int or sequence of widths -> (len(d),) measured std; it grows like √d.
    """
    dims = np.atleast_1d(np.asarray(d))
    if samples < 2:
        raise ValueError(f"Need at least 2 samples to measure a spread, got {samples}.")
    if np.any(dims < 1):
        raise ValueError("Every width d must be at least 1.")
    out = np.empty(dims.size)
    for i, width in enumerate(dims.astype(int)):
        q = rng.standard_normal((samples, width))
        k = rng.standard_normal((samples, width))
        out[i] = np.einsum("sd,sd->s", q, k).std()
    return out


def reliable_count(counts, rates, level: float = 0.9) -> int:
    """The largest of ``counts`` (increasing) up to which every one of ``rates`` (measured at
    the first len(rates) counts) is at least ``level``; 0 if the first already falls short."""
    short = np.flatnonzero(np.asarray(rates) < level)
    end = int(short[0]) if short.size else len(rates)
    return int(counts[end - 1]) if end > 0 else 0
