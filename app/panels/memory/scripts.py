"""The Memory panel's steps as scripts over core (see app/panels/scripts.py)."""

from __future__ import annotations

from app.panels.memory.state import BETAS, MemoryState, N
from app.panels.scripts import Script

SHOWN = 10  # stored patterns printed as pictures, as the page draws them

PICTURES = '''


    def pictures(patterns, captions):
        """Print patterns (k, 64) side by side as 8 × 8 pictures: # for a positive entry, . otherwise."""
        grids = [np.reshape(p, (8, 8)) > 0 for p in patterns]
        print("  ".join(f"{caption:<8}" for caption in captions))
        for row in range(8):
            print("  ".join("".join("#" if v else "." for v in grid[row]) for grid in grids))


    '''


def rebuild(s: MemoryState, *imports: str) -> str:
    """Code that rebuilds the comparison of both networks as ``c``."""
    if s.source == "article":
        names = ", ".join(sorted(["article_experiment", *imports]))
        code = f"""
    import numpy as np

    from core.maths.hopfield import {names}
    from core.printing import table

    # The second article's experiment: 9 ±1 patterns in the classical network, 200 Gaussian ones in
    # the modern network, {N} dimensions; pattern 0 queried with 6 flipped entries / noise σ = 0.3.
    seed, beta = {s.seed}, {s.beta!r}
    c = article_experiment(seed, beta)  # both networks, queried once
    """
    else:
        names = ", ".join(sorted(["corrupt_and_compare", "digit_glyphs", "pick_patterns", *imports]))
        code = f"""
    import numpy as np

    from core.maths.hopfield import {names}
    from core.printing import table

    # The settings at the left: which patterns, how many, the one queried, its corruption, β, seed.
    source, stored, target, flips, noise = {s.source!r}, {s.stored}, {s.target}, {s.flips}, {s.noise!r}
    beta, seed = {s.beta!r}, {s.seed}
    rng = np.random.default_rng(seed)
    patterns = pick_patterns(source, stored, digit_glyphs(), {N}, rng)  # (stored, {N}) of ±1
    # Store them in both networks; query both with the target after flipping pixels and adding noise.
    c = corrupt_and_compare(patterns, target, flips, noise, beta, rng)
    """
    return code


PATH_PICTURE = """
    shown = [*states, c.classical_patterns[t]]
    for k, state in enumerate(shown):
        plt.subplot(1, len(shown), k + 1)
        plt.imshow(state.reshape(8, 8), cmap="Greys", vmin=-1, vmax=1)
        plt.axis("off")
    plt.suptitle("Classical: the query, each update, the target")
    """

BARS_PICTURE = """
    plt.bar(range(len(weights)), weights)
    plt.bar([t], [weights[t]], color="C1")
    plt.xlabel("stored pattern")
    plt.ylabel("weight")
    plt.title("weights softmax(β·X·q)")
    """

STORED_PICTURE = """
    shown = [*first, c.classical_query]
    for k, p in enumerate(shown):
        plt.subplot(1, len(shown), k + 1)
        plt.imshow(p.reshape(8, 8), cmap="Greys", vmin=-1, vmax=1)
        plt.axis("off")
    plt.suptitle("Stored patterns, then the corrupted query")
    """

RETRIEVAL_PICTURES = (STORED_PICTURE, PATH_PICTURE, BARS_PICTURE)  # steps 1, 2 and 3


def retrieval(s: MemoryState, picture: str = BARS_PICTURE) -> Script:
    """What the retrieval page shows, both networks side by side, drawing ``picture`` (one of
    RETRIEVAL_PICTURES)."""
    body = (
        rebuild(s)
        + PICTURES
        + f"""
    t = c.target
    print(f"Classical: {{len(c.classical_patterns)}} stored ±1 patterns (up to {SHOWN} drawn)")
    first = c.classical_patterns[:{SHOWN}]
    pictures(first, [f"#{{i}}" for i in range(len(first))])
    # sign(W·s) with Hebbian weights, every neuron at once, until nothing changes.
    states = c.classical.states[:, 0]  # the query, then the state after each update
    print(f"Classical: {{c.classical_verdict.outcome.value}}; settled: {{c.classical.converged[0]}}")
    pictures([*states, c.classical_patterns[t]], ["query", *range(1, len(states)), "target"])
    # One modern step: Xᵀ·softmax(β·X·query), attention with keys = values = the stored patterns.
    print(f"Modern: {{c.modern_verdict.outcome.value}} in one step")
    path = np.column_stack([c.modern_query, c.modern.output[0], c.modern_patterns[t]])
    print(table(path, range({N}), ["query", "output", "target"]))
    weights = c.modern.weights[0]  # one per stored pattern
    print(table(weights, [f"#{{i}}" for i in range(len(weights))], ["weight"]))
    """
    )
    return Script(body, picture)


def beta(s: MemoryState) -> Script:
    body = (
        rebuild(s, "weights_over_beta")
        + f"""
    t = c.target
    # softmax(β·X·q) at {BETAS.size} values of β from {BETAS[0]:g} to {BETAS[-1]:g}, evenly on a log scale.
    betas = np.geomspace({float(BETAS[0])!r}, {float(BETAS[-1])!r}, {BETAS.size})
    curve = weights_over_beta(c.modern_patterns, c.modern_query, betas)  # (betas, stored)
    others = np.delete(curve, t, axis=1)
    strongest = others.max(axis=1) if others.size else np.zeros(len(betas))
    betas_text = [f"{{b:.4g}}" for b in betas]
    print(table(np.column_stack([curve[:, t], strongest]), betas_text, ["target", "strongest other"]))
    print(f"At β = {{beta:.6g}} (T = 1/(β·√{N}) = {{1 / (beta * {N} ** 0.5):.6g}}):")
    weights = c.modern.weights[0]
    print(table(weights, [f"#{{i}}" for i in range(len(weights))], ["weight"]))
    shown = [c.modern_query, c.modern_patterns.mean(axis=0), c.modern.output[0], c.modern_patterns[t]]
    print(table(np.column_stack(shown), range({N}), ["query", "mean", "output", "target"]))
    """
    )
    picture = """
    plt.semilogx(betas, curve[:, t], label="target")
    plt.semilogx(betas, strongest, label="strongest other")
    plt.axvline(beta, color="grey")
    plt.xlabel("β")
    plt.ylabel("weight")
    plt.legend()
    plt.title("How the weights sharpen with β")
    """
    return Script(body, picture)


def capacity(seed: int, trials: int, flips: int, beta: float) -> Script:
    """The capacity sweep with these settings (as Run the sweep computes it)."""
    body = f"""
    import numpy as np

    from core.maths.hopfield import capacity_sweep
    from core.printing import table

    seed, trials, flips, beta = {seed}, {trials}, {flips}, {beta!r}
    # For each load M: store M random ±1 patterns of {N} entries, query every one with flipped
    # pixels, count the share each network brings back (every entry within 0.3).
    sweep = capacity_sweep(np.random.default_rng(seed), n={N}, trials=trials, flips=flips, beta=beta)
    print(table(np.column_stack([sweep.classical, sweep.modern]), sweep.loads, ["classical", "modern"]))
    print(f"At least 90% recovered up to M = {{sweep.reliable_load(sweep.classical)}} (classical), "
          f"{{sweep.reliable_load(sweep.modern)}} (modern); 0.14·N = {{sweep.classical_limit:.3g}}")
    """
    picture = """
    plt.semilogx(sweep.loads, sweep.classical, "o-", label="classical")
    plt.semilogx(sweep.loads, sweep.modern, "^-", label="modern")
    plt.xlabel("stored patterns M")
    plt.ylabel("recovered")
    plt.legend()
    plt.title(f"Corrupted queries recovered, N = {sweep.n}")
    """
    return Script(body, picture)
