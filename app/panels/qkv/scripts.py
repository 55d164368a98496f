"""The Q, K, V panel's steps as scripts over core (see app/panels/scripts.py)."""

from __future__ import annotations

from textwrap import indent

import numpy as np

from app.panels.qkv.state import QKVState
from app.panels.scripts import Script, heatmap
from core.maths.qkv import random_example


def example_code(s: QKVState) -> str:
    """Code that rebuilds the state's example as ``example``, with ``tokens`` and ``labels``."""
    code = f"""
    from core.maths.attention import attend
    from core.printing import table
    from core.maths.qkv import random_example, tokenize

    # The settings at the panel's left.
    text, d_model, d_k, seed = {s.text!r}, {s.d_model}, {s.d_k}, {s.seed}
    tokens = tokenize(text)  # split at spaces
    # Seeded random embeddings, one table row per distinct token, and the weights W_Q, W_K, W_V.
    example = random_example(tokens, d_model, d_k, seed)
    """
    drawn = random_example(s.example.tokens, s.d_model, s.d_k, s.seed)
    if not np.array_equal(drawn.table, s.example.table):
        rows = indent(
            np.array2string(s.example.table, separator=", ", floatmode="unique", threshold=10**6), " " * 8
        )
        code += f"""
    # The table as the panel has it: edited by hand, or kept from earlier text.
    import numpy as np

    from core.maths.qkv import Example

    table_rows = np.array(
{rows}
    )
    example = Example(tokens, table_rows, example.W_Q, example.W_K, example.W_V)
    """
    return (
        code
        + """
    Q, K, V = example.projections()  # X·W_Q, X·W_K, X·W_V, one row per token
    trace = attend(Q, K, V)  # every step of softmax(Q·Kᵀ/√d_k)·V
    dims = [str(k) for k in range(d_k)]
    """
    )


def matrix_step(s: QKVState, name: str, values: str, cols: str, what: str) -> Script:
    """A step that prints one matrix and draws it."""
    body = (
        example_code(s)
        + f"""
    print({what!r})
    print(table({values}, tokens, {cols}))
    """
    )
    return Script(body, heatmap(values, "tokens", cols, name))


def embeddings(s: QKVState) -> Script:
    body = (
        example_code(s)
        + """
    X = example.X  # one row per token; a repeated token repeats its row
    print("The embeddings X: one row per token")
    print(table(X, tokens, [str(k) for k in range(d_model)]))
    """
    )
    return Script(body, heatmap("X", "tokens", "[str(k) for k in range(d_model)]", "X"))


def projections(s: QKVState, name: str) -> Script:
    body = (
        example_code(s)
        + f"""
    W = example.W_{name}  # (d_model, d_k)
    print("The embeddings X")
    print(table(example.X, tokens, [str(k) for k in range(d_model)]))
    print("W_{name}: d_model rows, d_k columns")
    print(table(W, [str(k) for k in range(d_model)], dims))
    print("{name} = X·W_{name}")
    print(table({name}, tokens, dims))
    """
    )
    return Script(body, heatmap(name, "tokens", "dims", name))


def scores(s: QKVState) -> Script:
    return matrix_step(s, "Q·Kᵀ", "trace.scores", "tokens", "Scores Q·Kᵀ: row = query, column = key")


def scaled(s: QKVState) -> Script:
    return matrix_step(s, "Q·Kᵀ/√d_k", "trace.scaled", "tokens", "Scores divided by √d_k")


def weights(s: QKVState) -> Script:
    body = (
        example_code(s)
        + """
    print("Softmax of each row: the share of each key's value a query takes")
    print(table(trace.weights, tokens, tokens))
    print(table(trace.weights.sum(axis=1), tokens, ["row sum"]))
    """
    )
    return Script(body, heatmap("trace.weights", "tokens", "tokens", "softmax(Q·Kᵀ/√d_k)"))


def output(s: QKVState) -> Script:
    body = (
        example_code(s)
        + """
    print("The weights")
    print(table(trace.weights, tokens, tokens))
    print("The values V")
    print(table(V, tokens, dims))
    print("The output: weights · V, a new vector per token")
    print(table(trace.output, tokens, dims))
    """
    )
    return Script(body, heatmap("trace.output", "tokens", "dims", "softmax(Q·Kᵀ/√d_k)·V"))
