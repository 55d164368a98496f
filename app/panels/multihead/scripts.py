"""The Multi-head panel's steps as scripts over core (see app/panels/scripts.py)."""

from __future__ import annotations

from app.panels.multihead.state import MASKS, MultiHeadState
from app.panels.scripts import Script, bars, heatmap, subplots


def mask_code(name: str) -> str:
    """Code for the mask ``name`` (a key of MASKS) over ``n`` tokens."""
    if MASKS[name] is None:
        return "None"
    make, *args = MASKS[name]
    return f"masks.{make.__name__}({', '.join(['n', *map(repr, args)])})"


def heads_code(s: MultiHeadState, *names: str) -> str:
    """Code that rebuilds the panel's heads as ``trace`` (with ``tokens``, ``n``, ``d_k``, ``W_O``);
    ``names``: more of core.maths.multihead to import."""
    imported = ", ".join(sorted({"multi_head", "random_weights", *names}))
    masks = "" if MASKS[s.mask] is None else "from core.maths import masks\n    "
    return f"""
    import numpy as np

    {masks}from core.maths.multihead import {imported}
    from core.printing import table
    from core.maths.qkv import tokenize

    # The settings at the panel's left.
    text, d_model, heads, seed = {s.text!r}, {s.d_model}, {s.heads}, {s.seed}
    scale, temperature = {s.scale!r}, {s.temperature!r}  # weights × scale; scores ÷ (√d_k · T)
    tokens = tokenize(text)  # split at spaces
    n, d_k = len(tokens), d_model // heads
    # Seeded embeddings X (n, d_model) and weights: per head W_Q, W_K, W_V (d_model, d_k), and W_O.
    draws = random_weights(np.random.default_rng(seed), tokens, d_model)
    W_Q, W_K, W_V, W_O = draws.split(heads, scale)
    mask = {mask_code(s.mask)}  # the mask {s.mask!r}, shared by every head
    trace = multi_head(draws.X, W_Q, W_K, W_V, W_O, mask=mask, temperature=temperature)
    """


def heads(s: MultiHeadState, selected: int) -> Script:
    """Every head's weights, and the queries and keys of head ``selected`` (the one enlarged)."""
    body = (
        heads_code(s)
        + f"""
    for i, head in enumerate(trace.heads):
        print(f"Head {{i}}: weights, row = query, column = key")
        print(table(head.weights, tokens, tokens))
    i = {selected}  # the head shown enlarged
    dims = [str(k) for k in range(d_k)]
    print(f"Head {{i}}: queries Q = X·W_Q[{{i}}]")
    print(table(trace.queries[i], tokens, dims))
    print(f"Head {{i}}: keys K = X·W_K[{{i}}]")
    print(table(trace.keys[i], tokens, dims))
    """
    )
    picture = """
    top = trace.weights.max()  # one colour scale for every head
    columns = min(heads, 4)
    rows = -(-heads // columns)
    plt.figure(figsize=(3 * columns, 3 * rows))
    for i, head in enumerate(trace.heads):
        plt.subplot(rows, columns, i + 1)
        plt.imshow(head.weights, cmap="viridis", vmin=0, vmax=top)
        plt.title(f"head {i}")
        plt.axis("off")
    plt.tight_layout()
    """
    return Script(body, picture)


def stats(s: MultiHeadState) -> Script:
    body = (
        heads_code(s, "head_table")
        + """
    stats = head_table(trace)  # means over the query rows that see at least one key
    columns = ["mean peak position", "mean entropy (nats)", "agreement with head 0", "agreement with uniform"]
    values = [stats.mean_peak, stats.mean_entropy, stats.agreement_head0, stats.agreement_uniform]
    names = [f"head {i}" for i in range(heads)]
    print(table(np.column_stack(values), names, columns))
    print(f"Mean entropy is at most ln({n}) = {np.log(n):.6g}, when the weights spread evenly.")
    """
    )
    return Script(body, bars("stats.mean_entropy", "names", "Mean entropy per head (nats)"))


def join(s: MultiHeadState) -> Script:
    body = (
        heads_code(s, "split_cost")
        + """
    features = [str(k) for k in range(d_model)]
    print(f"concat: the {heads} heads' outputs of {n} × {d_k} side by side, head 0 first")
    print(table(trace.concat, tokens, features))
    print(f"W_O ({d_model} × {d_model}): each {d_k} rows read one head's block of concat")
    print(table(W_O, features, features))
    print("output = concat · W_O, the same shape as X")
    print(table(trace.output, tokens, features))
    one, split = split_cost(n, d_model, 1), split_cost(n, d_model, heads)
    print(f"FLOPs of the matrix products: {one.flops['total']:,} for 1 head of width {d_model}, "
          f"{split.flops['total']:,} for {heads} heads of width {d_k}")
    print(f"Exponentials: {one.exponentials:,} for 1 head, {split.exponentials:,} for {heads}")
    """
    )
    picture = subplots(
        heatmap("trace.concat", "tokens", "features", "concat"),
        heatmap("W_O", "features", "features", "W_O"),
        heatmap("trace.output", "tokens", "features", "output = concat · W_O"),
        columns=3,
    )
    return Script(body, picture)
