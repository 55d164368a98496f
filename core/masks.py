"""Attention masks as boolean matrices (n_q, n_k): True = the query may attend to the key.

This is the same sense as torch's ``scaled_dot_product_attention`` boolean ``attn_mask``.
"""

from __future__ import annotations

import numpy as np


def _check_n(n: int) -> int:
    if int(n) != n or n < 1:
        raise ValueError(f"A mask needs at least one position, got n = {n}.")
    return int(n)


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
    idx = np.asarray(list(global_idx), dtype=int)
    if idx.size and (idx.min() < 0 or idx.max() >= n):
        raise ValueError(f"Global positions must lie in 0 … {n - 1}, got {idx.tolist()}.")
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
