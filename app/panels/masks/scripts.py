"""The Masks panel's steps as scripts over core (see app/panels/scripts.py)."""

from __future__ import annotations

import numpy as np

from app.panels.masks.state import D_K, D_MODEL, FILL_NAMES, FILLS, MasksState
from app.panels.scripts import Script, bars, heatmap, subplots
from core import inputs
from core.maths.qkv import MAX_TOKENS, tokenize


def example_code(s: MasksState) -> str:
    """Code that rebuilds the text's ``tokens`` and their ``Q``, ``K``, ``V`` as the panel draws them."""
    return f"""
    import numpy as np

    from core.maths import masks
    from core.maths.attention import attend
    from core.printing import table
    from core.maths.qkv import random_example, tokenize

    # The settings above the steps; n_pad: how many trailing tokens are padding.
    text, seed, n_pad = {s.text!r}, {s.seed}, {s.n_pad}
    tokens = tokenize(text)  # split at spaces
    n = len(tokens)
    # Seeded random embeddings and projections, d_model {D_MODEL} and d_k {D_K}: one row per token.
    Q, K, V = random_example(tokens, {D_MODEL}, {D_K}, seed).projections()
    """


def mask_code(s: MasksState) -> str:
    """Code that builds the panel's ``mask`` (True = the query may attend to the key) and ``trace``."""
    global_idx = inputs.positions(s.global_text, "Global positions", MAX_TOKENS - 1)
    spec = f"{s.kind!r}, window={s.window}, symmetric={s.symmetric}, global_idx={global_idx}, n_pad=n_pad"
    code = ""
    if s.kind == "custom":
        rows = ",\n".join(f"        {[int(v) for v in row]}" for row in s.custom)
        code = f"""
    # The mask as drawn by hand: one row per query, 1 = may attend.
    custom = np.array([
{rows}
    ], dtype=bool)
    """
        spec += ", custom=custom"
    return (
        code
        + f"""
    # The mask kind and its settings, then the padding keys hidden from every query.
    spec = masks.MaskSpec({spec})
    mask = masks.build(spec, n)  # (n, n) bool
    trace = attend(Q, K, V, mask=mask)  # hidden cells get the score −∞ before the softmax
    """
    )


def kinds(s: MasksState) -> Script:
    body = (
        example_code(s)
        + mask_code(s)
        + """
    print("The mask: 1 = may attend, 0 = hidden")
    print(table(mask.astype(int), tokens, tokens))
    print("Scaled scores Q·Kᵀ/√d_k, hidden = −∞")
    print(table(trace.masked, tokens, tokens))
    print("Weights")
    print(table(trace.weights, tokens, tokens))
    cost = masks.cost(mask)
    leak = masks.leaked_weight(trace.weights, mask)  # weight on hidden keys, per query
    print(f"Computed cells: {cost.computed} of {cost.total} ({100 * cost.fraction:.1f} %)")
    print(f"A kernel that skips hidden cells saves {100 * cost.saving:.1f} %")
    print(table(np.column_stack([cost.per_row, leak]), tokens, ["keys computed", "weight on hidden keys"]))
    """
    )
    picture = subplots(
        heatmap("mask", "tokens", "tokens", "Mask: bright = may attend"),
        heatmap("trace.weights", "tokens", "tokens", "Weights"),
    )
    return Script(body, picture)


def fill_code(fill: float) -> str:
    """Code for a number added to hidden scores."""
    return "-np.inf" if np.isneginf(fill) else f"{fill:g}"


def additive(s: MasksState) -> Script:
    fills = ", ".join(f"{name!r}: {fill_code(f)}" for name, f in zip(FILL_NAMES, FILLS, strict=True))
    body = (
        example_code(s)
        + mask_code(s)
        + f"""
    # The mask added to the scaled scores as a number: 0 where allowed, the fill where hidden.
    fills = {{{fills}}}
    outcomes = [masks.additive_outcome(trace.scaled, mask, fill) for fill in fills.values()]
    for name, outcome in zip(fills, outcomes):
        print(f"Weights, hidden cells + ({{name}})")
        print(table(outcome.weights, tokens, tokens))
    print("Weight that reaches hidden keys, per query")
    print(table(np.column_stack([o.leak for o in outcomes]), tokens, [f"leak, {{name}}" for name in fills]))
    print("Queries that may attend to nothing:", [tokens[i] for i in masks.empty_rows(mask)])
    """
    )
    picture = """
    plt.figure(figsize=(15, 4))
    for k, (name, outcome) in enumerate(zip(fills, outcomes), 1):
        plt.subplot(1, len(fills), k)
        plt.imshow(outcome.weights, cmap="viridis", vmin=0, vmax=1)
        plt.xticks(range(n), tokens, rotation=90)
        plt.yticks(range(n), tokens)
        plt.title(f"Weights, hidden cells + ({name})")
    plt.tight_layout()
    """
    return Script(body, picture)


def cross(s: MasksState) -> Script:
    body = f"""
    from core.printing import table
    from core.maths.qkv import cross_attention, tokenize

    # Queries from one text (a decoder's), keys and values from another (an encoder's).
    queries, keys, seed = {s.queries!r}, {s.keys!r}, {s.seed}
    q_tokens, kv_tokens = tokenize(queries), tokenize(keys)
    # One seeded embedding table and one set of projections for both, d_model {D_MODEL} and d_k {D_K}.
    cross = cross_attention(q_tokens, kv_tokens, {D_MODEL}, {D_K}, seed)
    print("Cross-attention weights: one row per query token, one column per key token")
    print(table(cross.weights, q_tokens, kv_tokens))
    print(table(cross.weights.sum(axis=1), q_tokens, ["row sum"]))
    """
    return Script(body, heatmap("cross.weights", "q_tokens", "kv_tokens", "Cross-attention weights"))


def copying(s: MasksState) -> Script:
    body = (
        example_code(s)
        + f"""
    # Training: every real (not padding) token predicts the next one, all at once.
    real = max(n - n_pad, 1)
    causal = {s.copy_causal}  # the step's switch: a causal mask hides the answer
    copy = attend(Q[:real], K[:real], V[:real], mask=masks.causal(real) if causal else None)
    print("Weights during training")
    print(table(copy.weights, tokens[:real], tokens[:real]))
    """
    )
    if len(tokenize(s.text)) - s.n_pad < 2:  # no next token to put weight on
        return Script(body, heatmap("copy.weights", "tokens[:real]", "tokens[:real]", "Weights"))
    body += """
    answer = masks.next_token_weight(copy.weights)  # each token's weight on the one after it
    print("Weight each token puts on the next one (its answer)")
    print(table(answer, tokens[: real - 1], ["weight on the next token"]))
    print(f"Mean weight on the answer: {answer.mean():.6g}; largest: {answer.max():.6g}")
    """
    picture = subplots(
        heatmap("copy.weights", "tokens[:real]", "tokens[:real]", "Weights during training"),
        bars("answer", "tokens[: real - 1]", "Weight each token puts on the next one"),
    )
    return Script(body, picture)
