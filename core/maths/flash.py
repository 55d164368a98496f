"""Tiled attention with an online softmax, the idea behind FlashAttention.

The score matrix is never built whole. Queries are cut into blocks of ``block_q`` rows and
keys/values into blocks of ``block_k`` rows. For one query block, the key/value blocks arrive one
at a time; each query row keeps three running quantities:

    m    the largest scaled score seen so far
    l    the sum of exp(score − m) over the keys seen so far
    acc  the sum of exp(score − m) · v over the keys seen so far   (unnormalised output)

When a new tile raises the maximum from m to m', the old l and acc are multiplied by exp(m − m')
so that every term is measured against the same maximum. After the last tile, output = acc / l,
which equals softmax(Q·Kᵀ/√d_k)·V exactly (up to rounding).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from core.maths.attention import check_matrix


@dataclass(frozen=True)
class FlashStep:
    """The running state of one query block just after one key/value tile was folded in."""

    q_block: int  # index of the query block
    k_block: int  # index of the key/value block
    rows: slice  # query rows of the block
    cols: slice  # key rows of the tile
    tile_max: np.ndarray  # (block_q,) largest scaled score of each row within this tile
    rescale: np.ndarray  # (block_q,) exp(m_before − m_after), the factor applied to old l and acc
    m: np.ndarray  # (block_q,) running maximum after this tile
    l: np.ndarray  # noqa: E741  (block_q,) running sum of exponentials after this tile
    acc: np.ndarray  # (block_q, d_v) running unnormalised output after this tile

    @property
    def partial_output(self) -> np.ndarray:
        """acc / l: the attention output over the keys seen so far (zero rows where l = 0)."""
        return np.divide(self.acc, self.l[:, None], out=np.zeros_like(self.acc), where=self.l[:, None] > 0)


@dataclass(frozen=True)
class FlashTrace:
    """Result of ``tiled_attention``. n_q queries, n_k keys, d_v value width."""

    output: np.ndarray  # (n_q, d_v)  acc / l; a row with no allowed key is all zeros
    m: np.ndarray  # (n_q,) final running maximum (−inf for a row with no allowed key)
    l: np.ndarray  # noqa: E741  (n_q,) final sum of exponentials (0 for a row with no allowed key)
    block_q: int
    block_k: int
    n_q_blocks: int
    n_k_blocks: int
    steps: tuple[FlashStep, ...]  # in the order computed; empty when record=False
    skipped: tuple[tuple[int, int], ...]  # (q_block, k_block) tiles the mask hides entirely
    n_k: int  # number of keys

    def _check_step(self, step: int) -> int:
        if not self.steps:
            raise ValueError("This trace kept no steps; run tiled_attention with record=True.")
        if int(step) != step or not 0 <= step < len(self.steps):
            raise ValueError(f"Step must be 0 … {len(self.steps) - 1}, got {step}.")
        return int(step)

    def state_after(self, step: int) -> RowState:
        """m, l and the partial output of every query row once steps 0 … ``step`` are done.

        Rows whose block has not started yet hold the starting state m = −inf, l = 0, output 0.
        """
        step = self._check_step(step)
        n_q, d_v = self.output.shape
        m, l, out = np.full(n_q, -np.inf), np.zeros(n_q), np.zeros((n_q, d_v))  # noqa: E741
        for s in self.steps[: step + 1]:  # later steps of a block overwrite earlier ones
            m[s.rows], l[s.rows], out[s.rows] = s.m, s.l, s.partial_output
        return RowState(m, l, out)

    def computed_cells(self, step: int) -> np.ndarray:
        """Which score cells steps 0 … ``step`` have computed. (n_q, n_k) bool"""
        step = self._check_step(step)
        done = np.zeros((self.output.shape[0], self.n_k), dtype=bool)
        for s in self.steps[: step + 1]:
            done[s.rows, s.cols] = True
        return done


@dataclass(frozen=True)
class RowState:
    """The running state of every query row at one moment. n_q rows, d_v value width."""

    m: np.ndarray  # (n_q,) running maximum
    l: np.ndarray  # noqa: E741  (n_q,) running sum of exponentials
    output: np.ndarray  # (n_q, d_v) acc / l over the keys seen so far


def _check_block(name: str, block: int, n: int, what: str) -> int:
    if int(block) != block or block < 1:
        raise ValueError(f"{name} must be a whole number of at least 1, got {block}.")
    if block > n:
        raise ValueError(f"{name} = {block} is larger than the {n} {what}; choose 1 … {n}.")
    return int(block)


def tiled_attention(
    Q: np.ndarray,
    K: np.ndarray,
    V: np.ndarray,
    block_q: int,
    block_k: int,
    mask: np.ndarray | None = None,
    *,
    record: bool = True,
    progress: Callable[[int, int], None] | None = None,
) -> FlashTrace:
    """softmax(Q·Kᵀ/√d_k)·V computed tile by tile with an online softmax.

    Q (n_q, d_k), K (n_k, d_k), V (n_k, d_v); mask (n_q, n_k) bool, True = may attend.
    Block sizes need not divide n; the last block is shorter. Tiles the mask hides entirely are
    skipped. ``record=False`` keeps only the result (no per-tile steps), for timing.
    ``progress(done, total)`` is called after each query block.
    """
    Q, K, V = check_matrix("Q", Q), check_matrix("K", K), check_matrix("V", V)
    n_q, d_k = Q.shape
    n_k, d_v = V.shape
    if K.shape[1] != d_k:
        raise ValueError(f"Q and K need the same width d_k, got {d_k} and {K.shape[1]}.")
    if K.shape[0] != n_k:
        raise ValueError(f"K and V need one row per key, got {K.shape[0]} and {n_k}.")
    if n_q == 0 or n_k == 0 or d_k == 0:
        raise ValueError("Tiled attention needs at least one query, one key and d_k ≥ 1.")
    block_q = _check_block("block_q", block_q, n_q, "queries")
    block_k = _check_block("block_k", block_k, n_k, "keys")
    if mask is not None:
        mask = np.asarray(mask, dtype=bool)
        if mask.shape != (n_q, n_k):
            raise ValueError(f"Mask shape {mask.shape} does not match scores {(n_q, n_k)}.")

    divisor = np.sqrt(d_k)
    n_qb, n_kb = -(-n_q // block_q), -(-n_k // block_k)
    output = np.zeros((n_q, d_v))
    m_all = np.full(n_q, -np.inf)
    l_all = np.zeros(n_q)
    steps: list[FlashStep] = []
    skipped: list[tuple[int, int]] = []

    for i in range(n_qb):
        rows = slice(i * block_q, min((i + 1) * block_q, n_q))
        q = Q[rows] / divisor  # (bq, d_k), scaled once per block
        m = np.full(q.shape[0], -np.inf)  # (bq,)
        l = np.zeros(q.shape[0])  # noqa: E741  (bq,)
        acc = np.zeros((q.shape[0], d_v))  # (bq, d_v)
        for j in range(n_kb):
            cols = slice(j * block_k, min((j + 1) * block_k, n_k))
            s = q @ K[cols].T  # (bq, bk)
            if mask is not None:
                allowed = mask[rows, cols]
                if not allowed.any():
                    skipped.append((i, j))
                    continue
                s = np.where(allowed, s, -np.inf)
            tile_max = s.max(axis=1)  # (bq,)
            m_new = np.maximum(m, tile_max)
            base = np.where(np.isfinite(m_new), m_new, 0.0)  # rows with nothing yet: any base
            rescale = np.exp(m - base)  # (bq,) exp(−inf) = 0 for a row's first finite tile
            p = np.exp(s - base[:, None])  # (bq, bk) masked cells give exp(−inf) = 0
            l = l * rescale + p.sum(axis=1)  # noqa: E741
            acc = acc * rescale[:, None] + p @ V[cols]
            m = m_new
            if record:
                steps.append(FlashStep(i, j, rows, cols, tile_max, rescale, m, l, acc))
        output[rows] = np.divide(acc, l[:, None], out=np.zeros_like(acc), where=l[:, None] > 0)
        m_all[rows], l_all[rows] = m, l
        if progress is not None:
            progress(i + 1, n_qb)

    return FlashTrace(output, m_all, l_all, block_q, block_k, n_qb, n_kb, tuple(steps), tuple(skipped), n_k)
