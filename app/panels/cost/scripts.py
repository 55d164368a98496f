"""The Cost panel's steps as scripts over core (see app/panels/scripts.py)."""

from __future__ import annotations

from app.panels.cost.state import (
    ARTICLE_LENGTHS,
    GRID_POINTS,
    N_MAX,
    N_MIN,
    PATTERN_PICTURE_N,
    CostState,
    FlashState,
    HandshakeState,
    SparseState,
)
from app.panels.scripts import Script, heatmap


def imports(*lines: str) -> str:
    """numpy, ``table`` and the step's own imports from core (``lines``, sorted here)."""
    core = "\n    ".join(sorted([*lines, "from core.printing import table"]))
    return f"""
    import numpy as np

    {core}
    """


def grid_code(n: int) -> str:
    """Code that makes ``grid``: the plots' lengths, with ``n`` among them."""
    return f"""
    # The plots' lengths: {GRID_POINTS} from {N_MIN:,} to {N_MAX:,}, evenly spaced on a log scale, and n.
    grid = sorted({{*np.round(np.geomspace({N_MIN}, {N_MAX}, {GRID_POINTS})).astype(int).tolist(), n}})
    """


def log_plot(columns: str, names: str, what: str) -> str:
    """Code that prints ``columns`` (one per curve, one row per length of ``grid``)."""
    return f"""
    print("{what}")
    print(table({columns}, grid, {names}))
    """


def calculator(s: CostState) -> Script:
    body = (
        imports("from core.maths.complexity import MEMORY_SIZES, attention_cost, first_length_exceeding")
        + f"""
    # The settings at the left.
    n, d_model, heads, layers, batch = {s.n}, {s.d_model}, {s.heads}, {s.layers}, {s.batch}
    dtype, causal = {s.dtype!r}, {s.causal}


    def cost(n):
        \"\"\"FLOPs and score-matrix bytes of attention over n tokens with these settings.\"\"\"
        return attention_cost(n, d_model, heads, causal, layers=layers, batch=batch, dtype=dtype)


    c = cost(n)
    print(f"n = {{n:,}}, one layer, the article's count (multiply-adds):")
    print(f"  projections 3·n·d_model² = {{c.qkv_flops:,}}")
    print(f"  scores n²·d_model = {{c.score_flops:,}}, weighted sum n²·d_model = {{c.weighted_sum_flops:,}}")
    print(f"  total = {{c.article_flops:,}}; benchmark count 4·n²·d·h = {{c.benchmark_flops:,}} FLOPs")
    print(f"Whole model: {{c.article_flops_model:,}} multiply-adds")
    print(f"Score matrices: {{c.score_bytes_per_head:,}} bytes per head, {{c.score_bytes_model:,}} in all")
    """
        + grid_code(s.n)
        + """
    costs = [cost(k) for k in grid]
    # One row per length; floats, as the counts outgrow 64-bit integers.
    flops = np.array([(x.qkv_flops_model, x.quadratic_flops_model, x.article_flops_model,
                       x.benchmark_flops_model) for x in costs], dtype=float)
    memory = np.array([(x.score_bytes_per_head, x.score_bytes_per_layer, x.score_bytes_model)
                       for x in costs], dtype=float)
    """
        + log_plot("flops", '["projections", "n² terms", "article", "4·n²·d·h"]', "FLOPs, whole model")
        + log_plot("memory", '["per head", "per layer", "whole model"]', "Bytes of score matrices")
        + f"""
    # Where the whole model's score matrices outgrow common memories (dots on the memory plot).
    pair = c.score_bytes_per_token_pair
    for label, size in MEMORY_SIZES:
        at = first_length_exceeding(size, pair)
        held = at * at * pair  # bytes
        print(f"{{label}}: exceeded at n = {{at:,}} ({{held:.6g}} bytes)")
    print("The article's table (one layer, one sequence): n, article FLOPs, benchmark FLOPs, MiB per head")
    for k in {ARTICLE_LENGTHS}:
        a = attention_cost(k, d_model, heads, causal, dtype=dtype)
        mib = a.score_bytes_per_head / 2**20
        print(f"{{k:>7,}}  {{a.article_flops:>22,}}  {{a.benchmark_flops:>22,}}  {{mib:.6g}}")
    """
    )
    picture = """
    plt.loglog(grid, flops, label=["projections", "n² terms", "article", "4·n²·d·h"])
    plt.axvline(n, color="grey")
    plt.xlabel("n")
    plt.ylabel("FLOPs")
    plt.legend()
    plt.title("FLOPs of attention (whole model)")
    """
    return Script(body, picture)


def handshakes(s: HandshakeState) -> Script:
    body = (
        imports("from core.maths.complexity import handshake_pairs, handshakes")
        + f"""
    people = {s.people}
    print(f"{{people}} people make {{handshakes(people):,}} handshakes (n(n−1)/2)")
    print(f"{{2 * people}} people make {{handshakes(2 * people):,}}: about four times as many")
    # Everyone sits round a circle, the first at the top; a line joins every pair.
    angle = np.pi / 2 - 2 * np.pi * np.arange(people) / people
    seats = np.column_stack([np.cos(angle), np.sin(angle)])
    print(table(seats, range(people), ["x", "y"]))
    i, j = handshake_pairs(people)  # every pair i < j
    """
    )
    picture = """
    plt.plot(seats[[i, j], 0], seats[[i, j], 1], color="C0", linewidth=0.8)
    plt.scatter(seats[:, 0], seats[:, 1], color="C1", zorder=3)
    plt.axis("equal")
    plt.axis("off")
    plt.title("Everyone greets everyone once")
    """
    return Script(body, picture)


def flash(s: FlashState, k: int) -> Script:
    """Step ``k`` (from 0) of the tiled computation, as the page's slider shows it."""
    body = (
        imports(
            "from core.maths.attention import attend",
            "from core.maths.complexity import tiled_memory",
            "from core.maths.flash import tiled_attention",
            "from core.maths.masks import causal as causal_mask",
        )
        + f"""
    # The settings at the left, and the tile step shown (counting from 0).
    n, d, block_q, block_k, causal, seed = {s.n}, {s.d}, {s.block_q}, {s.block_k}, {s.causal}, {s.seed}
    k = {k}
    rng = np.random.default_rng(seed)
    Q, K, V = (rng.normal(size=(n, d)) for _ in range(3))  # random queries, keys and values
    mask = causal_mask(n) if causal else None
    trace = tiled_attention(Q, K, V, block_q, block_k, mask=mask)  # every tile step, recorded
    naive = attend(Q, K, V, mask=mask)  # the whole score matrix at once, to compare
    step, tokens = trace.steps[k], [str(i) for i in range(n)]
    print(f"Step {{k + 1}} of {{len(trace.steps)}}: query block {{step.q_block}}, key tile {{step.k_block}}")
    # The scaled scores the steps so far have computed (−inf: not yet, or hidden by the mask).
    scores = np.where(trace.computed_cells(k), naive.masked, -np.inf)
    print(table(scores, tokens, tokens))
    # This tile, per query row: where the maximum rises, old l and output shrink by the rescale.
    before = trace.state_after(k - 1).m[step.rows] if k else np.full(len(step.m), -np.inf)
    tile = np.column_stack([step.tile_max, before, step.m, step.rescale, step.l])
    print(table(tile, tokens[step.rows], ["tile max", "m before", "m after", "rescale", "l after"]))
    state = trace.state_after(k)  # m, l and output so far of every query row
    print(table(np.column_stack([state.m, state.l, state.output]), tokens, ["m", "l", *range(d)]))
    error = np.abs(trace.output - naive.output).max()
    print(f"Final output against naive attention: max |difference| = {{error:.6g}}")
    held = tiled_memory(n, n, d, block_q, block_k)  # numbers kept besides Q, K, V
    print(f"Held: naive {{held.naive:,}}, tiled {{held.tiled:,}} (a tile and m, l, output per row)")
    """
    )
    return Script(body, heatmap("np.ma.masked_invalid(scores)", "tokens", "tokens", "Scores computed so far"))


def sparse(s: SparseState) -> Script:
    body = (
        imports(
            "from core.maths.complexity import pattern_cells", "from core.maths.masks import global_local"
        )
        + f"""
    # The settings at the left: length, window, global tokens (the first ones), causal or not.
    n, window, n_global, causal = {s.n}, {s.window}, {s.n_global}, {s.causal}


    def cells(n):
        \"\"\"Cells computed at length n: full attention, the window, the window + global tokens.\"\"\"
        return [pattern_cells(n, w, g, causal) for w, g in ((n, 0), (window, 0), (window, n_global))]


    names = ["full attention", "window", "window + global"]
    print(f"n = {{n:,}}: {{n * n:,}} query–key cells")
    for name, count in zip(names, cells(n)):
        print(f"  {{name}} computes {{count:,}} ({{100 * count / (n * n):.3g}} %)")
    """
        + grid_code(s.n)
        + """
    counts = np.array([cells(k) for k in grid], dtype=float)
    """
        + log_plot("counts", "names", "Cells computed")
        + f"""
    print("Share of the n² cells")
    print(table(counts / np.square(grid, dtype=float)[:, None], grid, names))
    # The pattern itself at {PATTERN_PICTURE_N} tokens: True where a query sees a key.
    pattern = global_local({PATTERN_PICTURE_N}, window, range(n_global), causal=causal)
    """
    )
    picture = """
    plt.subplot(1, 2, 1)
    plt.imshow(pattern, cmap="Greys")
    plt.title(f"The pattern at {len(pattern)} tokens")
    plt.subplot(1, 2, 2)
    plt.loglog(grid, counts, label=names)
    plt.xlabel("n")
    plt.legend()
    plt.title("Cells computed")
    """
    return Script(body, picture)
