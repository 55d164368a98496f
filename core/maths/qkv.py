"""The from-scratch example: static token embeddings and the three projections Q, K, V.

One token has one embedding whatever surrounds it: the embedding table has one row per distinct
token (in order of first appearance), and X repeats a row wherever its token repeats. With
distinct tokens the random draws are exactly those of the plain NumPy example
(``X = rng.normal(size=(n, d_model))``, then W_Q, W_K, W_V of shape (d_model, d_k)).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

__all__ = [
    "MAX_TOKENS", "Example", "cross_attention", "random_example", "retokenize", "tokenize", "vocabulary"
]  # fmt: skip

MAX_TOKENS = 64


def tokenize(text: str, max_tokens: int = MAX_TOKENS) -> list[str]:
    """Whitespace tokens of ``text``; ValueError when there are none or more than ``max_tokens``."""
    tokens = text.split()
    if not tokens:
        raise ValueError("Type at least one token (words separated by spaces).")
    if len(tokens) > max_tokens:
        raise ValueError(
            f"This view shows at most {max_tokens} tokens and the text has {len(tokens)}. "
            "Shorten it; the real-model panel takes longer inputs."
        )
    return tokens


def vocabulary(tokens: list[str]) -> tuple[list[str], np.ndarray]:
    """Distinct tokens in order of first appearance, and each token's row in that list. (n,)"""
    vocab = list(dict.fromkeys(tokens))
    index = {tok: k for k, tok in enumerate(vocab)}
    return vocab, np.array([index[t] for t in tokens], dtype=int)


@dataclass(frozen=True)
class Example:
    """Inputs of the step-by-step panel. table (n_vocab, d_model); W_* (d_model, d_k)."""

    tokens: list[str]
    table: np.ndarray
    W_Q: np.ndarray
    W_K: np.ndarray
    W_V: np.ndarray

    @property
    def X(self) -> np.ndarray:
        """Token embeddings, one row per token. (n, d_model)"""
        return self.table[vocabulary(self.tokens)[1]]

    def projections(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Q, K, V = X·W_Q, X·W_K, X·W_V, each (n, d_k)."""
        X = self.X
        return X @ self.W_Q, X @ self.W_K, X @ self.W_V


def random_example(tokens: list[str], d_model: int, d_k: int, seed: int) -> Example:
    """Seeded normal embeddings and projection weights for ``tokens``."""
    if d_model < 1:
        raise ValueError(f"d_model must be at least 1 (got {d_model}): each token needs a vector.")
    if d_k < 1:
        raise ValueError(f"d_k must be at least 1 (got {d_k}): queries and keys need a number to compare.")
    rng = np.random.default_rng(seed)
    vocab, _ = vocabulary(tokens)
    table = rng.normal(size=(len(vocab), d_model))
    W_Q, W_K, W_V = (rng.normal(size=(d_model, d_k)) for _ in range(3))
    return Example(list(tokens), table, W_Q, W_K, W_V)


def retokenize(example: Example, tokens: list[str], seed: int) -> Example:
    """Keep the rows of tokens already known and draw rows for new ones (same weights)."""
    old_vocab, _ = vocabulary(example.tokens)
    known = dict(zip(old_vocab, example.table, strict=True))
    rng = np.random.default_rng([seed, len(tokens)])
    vocab, _ = vocabulary(tokens)
    d_model = example.table.shape[1]
    table = np.array([known[t] if t in known else rng.normal(size=d_model) for t in vocab])
    return Example(list(tokens), table, example.W_Q, example.W_K, example.W_V)


def cross_attention(q_tokens: list[str], kv_tokens: list[str], d_model: int, d_k: int, seed: int):
    """Queries from one token sequence, keys and values from another, through one shared layer
    (one embedding table and one set of projections for both). Weights (len(q), len(kv))."""
    from core.maths.attention import attend

    both = random_example(q_tokens + kv_tokens, d_model, d_k, seed)
    Q, K, V = both.projections()
    m = len(q_tokens)
    return attend(Q[:m], K[m:], V[m:])
