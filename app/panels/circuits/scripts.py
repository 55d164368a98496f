"""The Circuits panel's steps as scripts over core (see app/panels/scripts.py)."""

from __future__ import annotations

from app.panels.circuits.state import CHECKED, CircuitState
from app.panels.scripts import Script, lines


def scores_code(s: CircuitState) -> str:
    """Code that loads the model, reads the pair and scores every edge as ``scores``."""
    return f"""
    import numpy as np

    from core.interp import circuits
    from core.interp.patching import prepare
    from core.models import load_model

    model = load_model({s.source!r})  # the decoder the panel loaded: a key, a folder or a cache id
    # The pair as the model reads it, judged by logit(target) - logit(foil) at the last position.
    pair = prepare(model, {s.clean!r}, {s.corrupt!r}, {s.target!r}, {s.foil!r})
    # Every edge's estimated change of the normalised metric (0 = corrupted run, 1 = clean run).
    scores = circuits.edge_scores(model, pair, {s.method!r}, {s.direction!r}, steps={s.steps})
    graph = scores.graph
    """


def pair(s: CircuitState) -> Script:
    """Step 1: the pair and both runs' metrics."""
    body = (
        scores_code(s)
        + """
    print("Clean:", "|".join(pair.clean_pieces))
    print("Corrupted:", "|".join(pair.corrupt_pieces))
    print("They differ at positions", [i + 1 for i in pair.differ])
    clean, corrupt = scores.ends.clean.metric, scores.ends.corrupt.metric
    print(f"logit(target) - logit(foil): clean {clean:.6f}, corrupted {corrupt:.6f}")
    """
    )
    return Script(body, 'plt.bar(["clean run", "corrupted run"], [clean, corrupt])')


def circuit(s: CircuitState) -> Script:
    """Step 2: the circuit's edges, their scores and the nodes they join."""
    body = (
        scores_code(s)
        + f"""
    mask = scores.circuit({s.edges})  # the top {s.edges} edges, less those off every path to the logits
    shown = [e for e in scores.top({s.edges}) if mask[e.sender, e.receiver]]
    joined = f"{{len(shown)}} of the top {s.edges} edges join the embeddings to the logits"
    print(joined, f"({{scores.count}} in all)")
    for e in shown:
        d = e.describe(graph)
        print(f"{{d['from']:>11}} -> {{d['to']:<11}} {{d['input'] or '':<2}} {{e.score:.4f}}")
    print("Nodes:", ", ".join(circuits.circuit_nodes(graph, mask)) or "none")
    """
        + (
            f"""
    edge = shown[{s.edge - 1}]  # the edge clicked
    effect = circuits.exact_effects(model, scores, [edge])[0]
    print(f"Edge {s.edge} patched alone: {{effect:.4f}} (its score {{edge.score:.4f}})")
    """
            if s.edge
            else ""
        )
    )
    return Script(body)


def faithfulness(s: CircuitState) -> Script:
    """Step 3: the fraction of the clean metric each circuit size keeps, for both methods."""
    body = (
        scores_code(s)
        + f"""
    sizes = circuits.curve_counts(scores.count)
    curves = {{}}
    for method in circuits.METHODS:
        found = circuits.edge_scores(model, pair, method, {s.direction!r}, steps={s.steps})
        curves[method] = circuits.faithfulness(model, found, sizes)
        print(method, "edges: recovered", ", ".join(f"{{n}}: {{r:.6f}}" for n, r in curves[method]))
        above = [n for n, r in curves[method] if r >= 0.8]
        print(" the smallest measured circuit above 80 %:", above[0] if above else "none")
    series = {{m: ([max(n, 1) for n, _ in c], [r for _, r in c]) for m, c in curves.items()}}
    """
    )
    return Script(body, lines("series", "Faithfulness", "edges in the circuit", "recovered", log="x"))


def exact(s: CircuitState) -> Script:
    """Step 4: the top edges' scores beside their exact effects."""
    body = (
        scores_code(s)
        + f"""
    from core.interp.token_scores import spearman

    top = scores.top({CHECKED})
    effects = circuits.exact_effects(model, scores, top)
    for e, effect in zip(top, effects):
        d = e.describe(graph)
        edge = f"{{d['from']:>11}} -> {{d['to']:<11}} {{d['input'] or '':<2}}"
        print(f"{{edge}} score {{e.score:.6f}} exact {{effect:.6f}}")
    print(f"Spearman's rank correlation: {{spearman([e.score for e in top], effects):.4f}}")
    """
    )
    picture = """
    plt.scatter([e.score for e in top], effects)
    low, high = min(min(effects), min(e.score for e in top)), max(max(effects), max(e.score for e in top))
    plt.plot([low, high], [low, high], color="grey")
    plt.xlabel("score")
    plt.ylabel("exact effect")
    """
    return Script(body, picture)
