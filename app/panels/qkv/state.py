"""The Q, K, V panel's one state (shared by every step) and its computation, Qt-free.

The embedding table carries history: a word keeps its row when other words change, and a typed
edit of the table stays. So the state holds the example it was last drawn to, and ``compute``
settles the next one from it (the result's ``state``).

    r = compute_qkv(QKVState())   # "the cat sat down", d_model 8, d_k 4, seed 0: the first article
    r.trace.weights               # (4, 4)
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np

from core.maths.attention import AttentionTrace, attend
from core.maths.qkv import Example, random_example, retokenize, tokenize, vocabulary


@dataclass(frozen=True)
class QKVState:
    text: str = "the cat sat down"
    d_model: int = 8
    d_k: int = 4
    seed: int = 0
    example: Example | None = None  # the embeddings and weights drawn so far (None: draw them)
    drawn: tuple[int, int, int] | None = None  # (d_model, d_k, seed) the example was drawn with


@dataclass(frozen=True)
class QKVResult:
    state: QKVState  # the settled state: its example is the one computed here
    Q: np.ndarray  # (n, d_k)
    K: np.ndarray  # (n, d_k)
    V: np.ndarray  # (n, d_k)
    trace: AttentionTrace

    @property
    def example(self) -> Example:
        return self.state.example


def compute_qkv(s: QKVState) -> QKVResult:
    tokens = tokenize(s.text)
    drawn = (s.d_model, s.d_k, s.seed)
    if s.example is None or s.drawn != drawn:
        example = random_example(tokens, s.d_model, s.d_k, s.seed)
    elif tokens != s.example.tokens:
        example = retokenize(s.example, tokens, s.seed)
    else:
        example = s.example
    Q, K, V = example.projections()
    return QKVResult(replace(s, example=example, drawn=drawn), Q, K, V, attend(Q, K, V))


def edit_embedding(example: Example, i: int, j: int, value: float) -> Example:
    """``example`` with dimension j of token i's table row set to ``value`` (every copy of the
    token follows)."""
    table = example.table.copy()
    table[vocabulary(example.tokens)[1][i], j] = value
    return replace(example, table=table)
