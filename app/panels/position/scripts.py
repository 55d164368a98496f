"""The Position panel's steps as scripts over core (see app/panels/scripts.py)."""

from __future__ import annotations

from app.panels.position.state import (
    HEATMAP_ROWS,
    MAX_DIALS,
    MAX_OFFSET,
    ORDER_WIDTH,
    SCORE_OFFSETS,
    TABLE_WIDTH,
    ExtensionState,
    OrderState,
    RopeState,
    SinusoidalState,
    TableState,
)
from app.panels.scripts import Script, heatmap

RIM_POINTS = 65  # points round each dial of the clock-hands picture

IMPORTS = """
    import numpy as np

    from core.maths import positional as pos
    from core.printing import table
    """


def order(s: OrderState) -> Script:
    body = (
        IMPORTS
        + f"""
    # The two sentences and the position encoding ("none", "sinusoidal" or "rope").
    sentence_a, sentence_b, encoding = {s.sentence_a!r}, {s.sentence_b!r}, {s.encoding!r}
    rng = np.random.default_rng(0)  # the panel's fixed seed
    # Self-attention over both sentences with the same random embeddings and projections.
    trace = pos.permutation_attention(sentence_a, sentence_b, {ORDER_WIDTH}, rng, encoding)
    print("Sentence A: weights (row = query, column = key)")
    print(table(trace.a.weights, trace.words_a, trace.words_a))
    print("Sentence B: weights")
    print(table(trace.b.weights, trace.words_b, trace.words_b))
    # B's weights put back in A's word order: without positions they are A's weights exactly.
    print(f"Largest difference from A's weights: {{trace.difference:.6g}}")
    """
    )
    picture = "".join(
        f"\n    plt.subplot(1, 2, {k})" + heatmap(f"trace.{x}.weights", words, words, f"Sentence {x.upper()}")
        for k, x, words in ((1, "a", "trace.words_a"), (2, "b", "trace.words_b"))
    )
    return Script(body, picture)


def sinusoidal(s: SinusoidalState) -> Script:
    body = (
        IMPORTS
        + f"""
    n, d, base = {s.n}, {s.d}, {s.base!r}  # positions, width, base of the frequencies
    print(table(pos.frequencies(d, base), [f"pair {{i}}" for i in range(d // 2)], ["ω_i = base^(−2i/d)"]))
    # The positions shown: all of them, or {HEATMAP_ROWS} evenly spaced ones for a longer sequence.
    rows = pos.sample_positions(n, {HEATMAP_ROWS})
    PE = pos.sinusoidal_at(rows, d, base)  # column 2i holds sin(p·ω_i), column 2i + 1 cos(p·ω_i)
    print("The encoding: row = position, column = dimension")
    print(table(PE, [f"{{p:,}}" for p in rows], range(d)))
    # PE(p)·PE(p + k) depends on the offset k only, not on p.
    offsets = np.arange(-min(n - 1, {MAX_OFFSET}), min(n - 1, {MAX_OFFSET}) + 1)
    print(table(pos.sinusoidal_offset_dot(offsets, d, base), offsets, ["PE(p)·PE(p + k)"]))
    """
    )
    return Script(body, heatmap("PE", "[]", "[]", "Encoding: position × dimension"))


def learned_table(s: TableState) -> Script:
    body = (
        IMPORTS
        + f"""
    rows, length = {s.rows}, {s.length}  # table rows, sequence length
    # A learned table of {TABLE_WIDTH}-wide vectors, random as before training.
    learned = pos.learned_table(rows, {TABLE_WIDTH}, np.random.default_rng(0))
    try:
        vectors = learned.embed(length)  # one row per position of the sequence
    except pos.PositionOutOfRange as missing:
        print(missing)  # the table ran out: only its rows have vectors
        vectors = learned.embed(learned.rows)
    shown = pos.sample_positions(len(vectors), {HEATMAP_ROWS})  # evenly spaced when there are many
    print("Vectors the sequence gets: row = position (from 1), column = dimension")
    print(table(vectors[shown], [f"{{p + 1:,}}" for p in shown], range({TABLE_WIDTH})))
    """
    )
    return Script(body, heatmap("vectors[shown]", "[]", "[]", "Vectors the sequence gets"))


def rope(s: RopeState) -> Script:
    body = (
        IMPORTS
        + f"""
    d, base, seed = {s.d}, {s.base!r}, {s.seed}  # width, base of the frequencies, seed of q and k
    m, n, shift = {s.m}, {s.n}, {s.shift}  # query position, key position, both moved by shift
    q, k = np.random.default_rng(seed).normal(size=(2, d))  # a random query and key
    print(table(pos.frequencies(d, base), [f"pair {{i}}" for i in range(d // 2)], ["ω_i"]))
    # The score after turning q by its position and k by its own: only m − n matters.
    score = pos.rope_score(q, k, m + shift, n + shift, base)
    at_start = pos.rope_score(q, k, m - min(m, n), n - min(m, n), base)
    print(f"q·k at m = {{m + shift}}, n = {{n + shift}}: {{score:.6g}}")
    print(f"The same offset starting at position 0: {{at_start:.6g}}")
    offsets = np.arange(-{SCORE_OFFSETS}, {SCORE_OFFSETS} + 1)
    by_offset = pos.rope_score(q, k, {SCORE_OFFSETS} + offsets, {SCORE_OFFSETS}, base)
    print(table(by_offset, offsets, ["q·k against m − n"]))
    # The clock hands: each pair turned by position × ω_i, on up to {MAX_DIALS} evenly chosen pairs,
    # scaled so the longer hand of a dial reaches its rim.
    pairs = np.unique(np.round(np.linspace(0, d // 2 - 1, min(d // 2, {MAX_DIALS})))).astype(int)
    q_hands = pos.rope(q, m + shift, base).reshape(-1, 2)[pairs]  # (dials, 2)
    k_hands = pos.rope(k, n + shift, base).reshape(-1, 2)[pairs]
    longer = np.maximum(np.hypot(*q_hands.T), np.hypot(*k_hands.T))
    hands = np.hstack([q_hands, k_hands]) / longer[:, None]
    print(table(hands, [f"pair {{i}}" for i in pairs], ["q x", "q y", "k x", "k y"]))
    rim = np.linspace(0, 2 * np.pi, {RIM_POINTS})  # each dial is a unit circle through these angles
    print("The dials' rims, sin of each angle:", " ".join(f"{{v:.6g}}" for v in np.sin(rim)))
    """
    )
    picture = """
    plt.plot(offsets, by_offset)
    plt.scatter([m - n], [score], color="C1")
    plt.xlabel("m − n")
    plt.ylabel("q·k")
    plt.title("Score after rotation against the offset")
    """
    return Script(body, picture)


def extension(s: ExtensionState) -> Script:
    body = (
        IMPORTS
        + f"""
    d, base = {s.d}, {s.base!r}  # width and base of RoPE
    trained, target, method = {s.trained}, {s.target}, {s.method!r}  # L, L′, the method circled
    w = pos.frequencies(d, base)  # ω_i as trained
    methods = ["none", "interpolation", "ntk", "yarn"]
    freqs = {{key: pos.extended_frequencies(key, d, base, trained, target) for key in methods}}
    # Per pair: the angle at the last target position ÷ the angle at L.
    ratio = np.column_stack([pos.overshoot(freqs[key], w, trained, target) for key in methods])
    pairs = [str(i) for i in range(d // 2)]
    print(table(ratio, pairs, methods))
    # Pairs that go past every angle seen in training (no full turn within L, ratio above 1).
    for key in methods:
        unseen = pos.unseen_pairs(freqs[key], w, trained, target)
        circled = " (circled)" if key == method else ""
        print(f"{{key}}{{circled}}: pairs {{np.flatnonzero(unseen).tolist()}} past the angles of training")
    """
    )
    picture = """
    plt.semilogy(ratio, label=methods)
    plt.axhline(1, color="grey", linestyle="--")
    plt.xlabel("pair i (fast → slow)")
    plt.ylabel("ratio")
    plt.legend()
    plt.title("Angle at the last position ÷ angle at L, per pair")
    """
    return Script(body, picture)
