"""How each number of an attention computation was made, written out with the actual numbers.

The views show these strings on hover, one cell at a time: a dot product as its list of products
and their total, then the scaling, the softmax and the weighted sum.
"""

from __future__ import annotations

import numpy as np

from core.maths.attention import AttentionTrace

MAX_TERMS = 8  # longer sums are shortened with "…"


def num(v: float, digits: int = 2) -> str:
    """A number with fixed decimals, a real minus sign (never "−0.00"), and −∞ for masked cells."""
    if not np.isfinite(v):
        return "–" if np.isnan(v) else ("−∞" if v < 0 else "∞")
    text = f"{v:.{digits}f}"
    return "−" + text[1:] if text.startswith("-") and float(text) != 0 else text.lstrip("-")


def _signed(v: float, digits: int) -> str:
    return f"({num(v, digits)})" if v < 0 else num(v, digits)


def dot_terms(a: np.ndarray, b: np.ndarray, digits: int = 2) -> str:
    """a·b written as its products and their sum: "0.10×0.50 + (−1.00)×2.00 = −1.95". a, b (d,)"""
    terms = [f"{_signed(x, digits)}×{_signed(y, digits)}" for x, y in zip(a, b, strict=True)]
    if len(terms) > MAX_TERMS:
        terms = [*terms[: MAX_TERMS - 2], "…", terms[-1]]
    return f"{' + '.join(terms)} = {num(float(np.dot(a, b)), digits)}"


def projection(x: np.ndarray, W: np.ndarray, j: int, x_name: str, w_name: str) -> str:
    """How output column j of x·W is made: the row x times column j of W. x (d_model,), W (d_model, d_k)"""
    return f"{x_name} · {w_name}[:, {j}] = {dot_terms(x, W[:, j])}"


def score(Q: np.ndarray, K: np.ndarray, i: int, j: int) -> str:
    """Step 1: the score of query i against key j is the dot product Q_i · K_j."""
    return f"Q[{i}] · K[{j}] = {dot_terms(Q[i], K[j])}"


def scaled(trace: AttentionTrace, i: int, j: int) -> str:
    """Step 2: the score divided by √d_k (times the temperature)."""
    return f"{num(trace.scores[i, j], 3)} ÷ {num(trace.divisor, 3)} = {num(trace.scaled[i, j], 3)}"


def weight(trace: AttentionTrace, i: int, j: int) -> str:
    """Step 3: exp of the cell over the sum of exps in its row (shifted by the row max for safety)."""
    row = trace.masked[i]
    if not np.isfinite(row).any():
        return "every key is hidden from this query, so its weights are all 0"
    if not np.isfinite(row[j]):
        return "hidden by the mask: exp(−∞) = 0"
    top = row[np.isfinite(row)].max()
    e = np.exp(row[np.isfinite(row)] - top)
    return (
        f"exp({num(row[j], 3)} − {num(top, 3)}) ÷ Σ exp(row − {num(top, 3)}) = "
        f"{num(np.exp(row[j] - top), 4)} ÷ {num(e.sum(), 4)} = {num(trace.weights[i, j], 4)}"
    )


def blend(trace: AttentionTrace, V: np.ndarray, i: int, k: int) -> str:
    """Step 4: output[i, k] is the weighted sum over keys j of weight[i, j] × V[j, k]."""
    return f"Σⱼ w[{i}, j]·V[j, {k}] = {dot_terms(trace.weights[i], V[:, k])}"
