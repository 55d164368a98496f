"""``attention-lab circuit``: which connections between heads and MLPs carry a decoder's answer.

    attention-lab circuit --clean "When Mary and John went to the store, John gave a drink to" \\
        --corrupt "When Mary and John went to the store, Mary gave a drink to" \\
        --target Mary --foil John --method eap-ig --edges 20 --exact 10

scores every edge of the model's graph (the embeddings, heads and MLPs writing into the stream;
each head's query, key and value inputs, each MLP's input and the logits reading it) by edge
attribution patching, prints the top edges with their exact effects (that edge alone patched),
and the faithfulness curve: the fraction of the clean metric the top-N circuit recovers with
every other edge fed from the corrupted run. Layers and heads count from 1.
"""

from __future__ import annotations

from app.commands.arguments import count, decoder_flags, pair_arguments, report
from app.commands.patch import DIRECTIONS
from app.commands.progress import counter, load_model, stage

METHODS = ("eap", "eap-ig")  # core.interp.circuits.METHODS, without importing NumPy for the parser
SIGN = {  # what a score's sign means, per direction
    "denoise": "a score is the change when the edge alone carries the clean run's value into the corrupted "
    "run: 1 = the whole way from corrupted to clean, positive = it restores the answer",
    "noise": "a score is the change when the edge alone carries the corrupted run's value into the clean "
    "run: −1 = the whole way from clean to corrupted, negative = the edge carries the answer",
}


def add_arguments(parser) -> None:
    pair_arguments(parser)
    parser.add_argument(
        "--method", choices=METHODS, default="eap",
        help="eap: one gradient (default); eap-ig: the gradient averaged between the two runs",
    )  # fmt: skip
    parser.add_argument(
        "--steps", type=count("--steps", 64), default=5, metavar="K", help="EAP-IG's points (5)"
    )
    parser.add_argument(
        "--direction", choices=DIRECTIONS, default="denoise",
        help="denoise: an edge's clean output into the corrupted run (default); noise: the other way",
    )  # fmt: skip
    parser.add_argument(
        "--edges", type=count("--edges", 10**7, low=0), default=20, metavar="N",
        help="the circuit: the top N edges by |score| (20; 0: every edge)",
    )  # fmt: skip
    parser.add_argument(
        "--exact", type=count("--exact", 10**7, low=0), default=10, metavar="N",
        help="patch each of the first N edges alone and print its exact effect (10)",
    )  # fmt: skip
    decoder_flags(parser)


def run(args) -> int:
    if not args.model:
        raise ValueError("--model is empty; give 'smollm2' or a model folder")
    model = load_model(args.model, "decoder")
    from core.interp import circuits
    from core.interp.patching import prepare
    from core.models import available_memory

    pair = prepare(model, args.clean, args.corrupt, args.target, args.foil)
    circuits.check_memory(model, pair.length, available_memory())
    stage(f"scoring every edge ({args.method})")
    scores = circuits.edge_scores(model, pair, args.method, args.direction, args.steps, counter("runs"))
    shown = scores.count if args.edges == 0 else args.edges
    circuits.check_count(shown, scores.count, "edges")
    if args.exact > shown:
        raise ValueError(f"--exact {args.exact} is more than the {shown} edges shown; choose 0 to {shown}.")
    edges = scores.top(shown)
    stage("patching single edges")
    exact = circuits.exact_effects(model, scores, edges[: args.exact], counter("edges"))
    stage("the faithfulness curve")
    sizes = sorted({*circuits.curve_counts(scores.count), shown})
    curve = circuits.faithfulness(model, scores, sizes, counter("circuits"))
    rows = [
        {**e.describe(scores.graph), "exact": x}
        for e, x in zip(edges, [*exact, *[None] * shown], strict=False)
    ]
    nodes = circuits.circuit_nodes(scores.graph, scores.circuit(shown))
    doc = {
        "model": model.name, "method": args.method, "direction": args.direction, "steps": scores.steps,
        "tokens": {"clean": list(pair.clean_pieces), "corrupt": list(pair.corrupt_pieces)},
        "target": pair.target.text, "foil": pair.foil.text,
        "metric": {"clean": scores.ends.clean.metric, "corrupt": scores.ends.corrupt.metric},
        "edges": rows, "count": scores.count,
        "faithfulness": [{"edges": n, "recovered": round(r, 6) + 0.0} for n, r in curve],  # no −0.0
        "nodes": nodes,
    }  # fmt: skip
    return report(doc, args.json, lambda: lines(model, pair, scores, rows, curve, nodes))


def lines(model, pair, scores, rows, curve, nodes) -> list[str]:
    """The pair, both metrics, the top edges, the curve and the circuit's nodes."""
    from core.interp.token_text import visible

    out = [f"model: {model.name}"]
    target, foil = visible(pair.target.text), visible(pair.foil.text)
    for name, run in (("clean", scores.ends.clean), ("corrupt", scores.ends.corrupt)):
        out.append(f"{name:<7} logit {target} − logit {foil} = {run.metric:.3f}")
    how = scores.method + (f", {scores.steps} steps" if scores.method == "eap-ig" else "")
    out.append(f"{scores.count} edges scored ({how}, {scores.direction}); {SIGN[scores.direction]}")
    out.append(f"{'from':<11} {'to':<11} {'input':<5} {'score':>8} {'exact':>8}")
    for row in rows:
        exact = "" if row["exact"] is None else f"{row['exact']:8.3f}"
        out.append(f"{row['from']:<11} {row['to']:<11} {row['input'] or '':<5} {row['score']:8.3f} {exact}")
    out.append("faithfulness (edges: recovered): " + ", ".join(f"{n}: {r + 0.0:.2f}" for n, r in curve))
    ways = ("clean", "corrupted") if scores.direction == "denoise" else ("corrupted", "clean")
    out.append(
        "  (the clean prompt with every edge outside the top N fed from the corrupted run, the kept edges "
        f"from the run itself; an exact effect above patches one edge alone, from the {ways[0]} run into "
        f"the {ways[1]} one, so a 1-edge circuit and the top edge's exact effect need not agree)"
    )
    reached = next((n for n, r in curve if r >= 0.8), None)
    out.append(
        f"smallest circuit above 80 %: {reached if reached is not None else 'none of those sizes'} edges"
    )
    out.append(f"the circuit's nodes ({len(nodes)}): {', '.join(nodes) or 'none'}")
    return out
