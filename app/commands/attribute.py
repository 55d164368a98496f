"""``attention-lab attribute``: which words of a prompt mattered for a decoder's answer, by five methods.

    attention-lab attribute --text "When Mary and John went to the store, John gave a drink to" \\
        --target Mary --foil John
    token      attention  rollout  grad×input    IG   occlusion
    When            …

Each method gives one score per token for the metric logit(target) − logit(foil) (log p(target)
without a foil; without a target, the model's top next token): the last position's attention
in one layer (averaged over heads, or one head), attention rollout (also with the first token
left out), gradient × input, integrated gradients from a zero input (or from one token's input
at every position, ``--baseline``) with its completeness gap, and occlusion. Then Spearman's
rank correlation between every pair of methods. Layers and heads count from 1.

With ``--pair TEXT2`` the model is an encoder (the bundled MiniLM by default) and the metric is the
cosine similarity of the two texts' mean-pooled vectors, explained on the first text's tokens
(core.interp.similarity): which words make the two close.
"""

from __future__ import annotations

from app.commands.arguments import count, decoder_flags, read_prompt, report
from app.commands.heads import MAX_LAYERS
from app.commands.progress import counter, load_model, stage
from core.decoder.sites import tl_row

CHOICES = ("attention", "rollout", "gradxinput", "ig", "occlusion", "all")
HEADINGS = {"attention": "attention", "rollout": "rollout", "gradxinput": "grad×input", "ig": "IG",
            "occlusion": "occlusion"}  # fmt: skip


def add_arguments(parser) -> None:
    parser.add_argument("--text", help="the prompt whose tokens are scored")
    parser.add_argument(
        "--set", action="store_true",
        help="instead, every method on the built-in set of prompts (names, facts, agreement, induction) "
        "and their mean rank correlations",
    )  # fmt: skip
    parser.add_argument(
        "--target", metavar="X", help="the answer explained, one token (default: the model's top next token)"
    )
    parser.add_argument("--foil", metavar="Y", help="compare with this one-token answer: logit(X) − logit(Y)")
    parser.add_argument("--method", choices=CHOICES, default="all", help="one method, or all (default)")
    parser.add_argument(
        "--layer",
        type=count("--layer", MAX_LAYERS),
        metavar="L",
        help="attention's layer (default: the last)",
    )
    parser.add_argument(
        "--head", type=count("--head", 10_000), metavar="H", help="one head (default: their mean)"
    )
    parser.add_argument(
        "--steps",
        type=count("--steps", 512),
        default=32,
        metavar="K",
        help="integrated gradients' steps (1-512), by the midpoint rule: the gradient at α = (j + ½)/K",
    )
    parser.add_argument(
        "--baseline", default=None, metavar="TOKEN",
        help="integrated gradients from this one token's input at every position (default: a zero input)",
    )  # fmt: skip
    parser.add_argument(
        "--pair", metavar="TEXT2",
        help="instead, the cosine similarity of --text and TEXT2 in an encoder, on --text's tokens",
    )  # fmt: skip
    decoder_flags(parser, None, "; with --pair an encoder (default: the bundled MiniLM)")


def run(args) -> int:
    if args.pair is not None:
        return similarity(args)
    args.model = args.model or "smollm2"
    if args.set:
        if args.text is not None or args.target is not None or args.foil is not None:
            raise ValueError("--set scores its own prompts; leave out --text, --target and --foil")
        return over_the_set(args)
    if args.text is None or not args.text.strip():
        raise ValueError("--text is empty; give a prompt whose words to score (or --set)")
    if args.foil is not None and args.target is None:
        raise ValueError("--foil compares with --target; give --target too")
    model = load_model(args.model, "decoder")  # core.models.DECODER: its stage line comes first
    from core.interp import token_scores as ts
    from core.interp.ranking import answer_token
    from core.interp.token_text import pieces

    ids, notes = read_prompt(model, args.text)
    if len(ids) < 2:
        raise ValueError("The text is one token: there is nothing to compare it with; give a longer text")
    if args.layer is not None and args.layer > model.n_layers:
        raise ValueError(
            f"--layer {args.layer} does not exist: {model.name} has layers 1 to {model.n_layers}"
        )
    if args.head is not None and args.head > model.n_heads:
        raise ValueError(f"--head {args.head} does not exist: {model.name} has heads 1 to {model.n_heads}")
    for flag, text in (("--target", args.target), ("--foil", args.foil)):
        if text is not None and not text.strip():
            raise ValueError(f"{flag} is empty; give a word, or leave it out")
    answer = ts.named_answer(model, args.text, args.target or "", args.foil or "")
    baseline = None
    if args.baseline is not None:
        if not args.baseline.strip():
            raise ValueError(
                "--baseline is empty; give a token (e.g. ' the') or leave it out for a zero input"
            )
        baseline = answer_token(model.tokenizer, args.baseline, what="--baseline").id
    doc = document(model, ids, list(pieces(model, ids)), answer, baseline, args)
    if notes:
        doc["notes"] = notes
    return report(doc, args.json, lambda: lines(doc))


def document(model, ids, tokens, answer, baseline, args) -> dict:
    from core.interp import token_scores as ts

    wanted = CHOICES[:-1] if args.method == "all" else (args.method,)
    stage(f"running {model.name}")
    patterns = ts.attention_rows(model, ids)
    layer = model.n_layers - 1 if args.layer is None else args.layer - 1
    rows = patterns[layer, :, -1] if args.head is None else patterns[layer, args.head - 1 : args.head, -1]
    methods, extra = {}, {}
    gxi, metric = ts.grad_x_input(model, ids, answer)
    if "attention" in wanted:
        methods["attention"] = rows.mean(0)
    if "rollout" in wanted:
        methods["rollout"] = ts.rollout(patterns)
        extra["rollout_without_first"] = ts.rollout(patterns, drop_first=True)
    if "gradxinput" in wanted:
        methods["gradxinput"] = gxi
    ig = None
    if "ig" in wanted:
        stage("integrated gradients")
        ig = ts.integrated_gradients(model, ids, answer, args.steps, baseline, counter("steps"))
        methods["ig"] = ig.scores
    if "occlusion" in wanted:
        stage("occlusion")
        methods["occlusion"] = ts.occlusion(model, ids, answer, counter("tokens"))
    decode = model.tokenizer.decode
    doc = {
        "model": model.name,
        "tokens": tokens,
        "ids": list(ids),
        "target": decode([answer.target]),
        "foil": None if answer.foil is None else decode([answer.foil]),
        "metric": {"kind": answer.kind, "value": round(metric, 6),
                   "baseline": None if ig is None else round(ig.baseline_metric, 6)},
        "attention": {
            "layer": layer + 1, "head": args.head,
            "tl": tl_row("pattern", layer, None if args.head is None else args.head - 1),
        },
        **scored(methods),
        **{name: [float(v) for v in values] for name, values in extra.items()},
    }  # fmt: skip
    if ig is not None:
        doc["ig"] = {"steps": ig.steps, "rule": ts.IG_RULE, "completeness_gap": ig.gap,
                     "baseline": "zero" if baseline is None else decode([baseline])}  # fmt: skip
    return doc


def similarity(args) -> int:
    """Every method for the cosine similarity of --text and --pair in an encoder."""
    if args.set:
        raise ValueError("--set scores a decoder's answers; leave out --pair, or --set")
    given = [f for f, v in (("--target", args.target), ("--foil", args.foil), ("--baseline", args.baseline),
                            ("--layer", args.layer), ("--head", args.head)) if v is not None]  # fmt: skip
    if given:
        raise ValueError(f"--pair explains a similarity, not an answer; leave out {', '.join(given)}")
    for flag, text in (("--text", args.text), ("--pair", args.pair)):
        if text is None or not text.strip():
            raise ValueError(f"{flag} is empty; give two texts to compare")
    model = load_model(args.model or "minilm")
    if model.kind != "encoder":
        raise ValueError(
            f"--pair reads a similarity from an encoder; {model.name} is a decoder: give --model minilm"
        )
    from core.interp import token_scores as ts
    from core.interp.similarity import similarity_scores

    stage("every method, for the cosine of the two texts' vectors")
    found = similarity_scores(model, args.text, args.pair, args.steps, counter("runs"))
    wanted = ts.METHODS if args.method == "all" else (args.method,)
    methods = {name: found.methods[name] for name in wanted}
    doc = {
        "model": model.name,
        "tokens": list(model.tokenizer.convert_ids_to_tokens(list(found.ids))),
        "ids": list(found.ids),
        "pair": {"text": args.pair, "ids": list(found.other_ids)},
        "metric": {"kind": "cosine", "value": round(found.cosine, 6),
                   "baseline": round(found.ig.baseline_metric, 6)},
        **scored(methods),
        "ig": {"steps": found.ig.steps, "rule": ts.IG_RULE, "completeness_gap": found.ig.gap,
               "baseline": "zero"},
        "aggregation": {
            "attention": "the last layer's weights, the mean over every head and every query position",
            "rollout": "attention rollout over every layer, the mean over every query position",
        },
    }  # fmt: skip
    return report(doc, args.json, lambda: lines(doc))


def scored(methods: dict) -> dict:
    """The JSON's "methods" (each method's scores, rounded) and "agreement" (Spearman's correlation
    of every pair asked for)."""
    from core.interp.token_scores import spearman

    names = list(methods)
    return {
        "methods": {name: [float(v) for v in methods[name]] for name in names},  # full precision: ranks
        "agreement": {f"{a}~{b}": spearman(methods[a], methods[b])  # recomputed from them agree
                      for k, a in enumerate(names) for b in names[k + 1 :]},
    }  # fmt: skip


def over_the_set(args) -> int:
    """Spearman's correlation of every pair of methods, averaged over the built-in prompts."""
    model = load_model(args.model, "decoder")
    from core.interp import token_scores as ts

    pairs = ts.AGREEMENT_SET
    stage(f"{len(pairs)} prompts, every method")
    found = ts.agreement_over(model, pairs, steps=args.steps, progress=counter("prompts"))
    names = list(ts.METHODS)

    def named(matrix) -> dict:
        return {
            f"{a}~{b}": float(matrix[i, j]) for i, a in enumerate(names) for j, b in enumerate(names) if j > i
        }

    doc = {
        "model": model.name,
        "steps": found.steps,
        "ig_rule": ts.IG_RULE,
        "agreement": named(found.mean),  # the mean over the prompts, a constant method's NaN left out
        "prompts": [{"text": text, "target": target, "foil": foil, "agreement": named(each)}
                    for (text, target, foil), each in zip(pairs, found.each, strict=True)],
    }  # fmt: skip

    def text() -> list[str]:
        out = [
            f"model: {doc['model']}; {len(pairs)} prompts, integrated gradients in {doc['steps']} steps "
            "(--json gives each prompt's numbers)",
            "Spearman's rank correlation, the mean over the prompts:",
        ]
        return out + [f"  {pair}: {value:.3f}" for pair, value in doc["agreement"].items()]

    return report(doc, args.json, text)


def lines(doc: dict) -> list[str]:
    from core.interp.token_text import visible

    metric = doc["metric"]
    if metric["kind"] == "cosine":
        what = f"the cosine of the two texts' mean vectors (against {doc['pair']['text']!r})"
    elif metric["kind"] == "logit_difference":
        what = f"logit {visible(doc['target'])!r} − logit {visible(doc['foil'])!r}"
    else:
        what = f"log p({visible(doc['target'])!r})"
    names = list(doc["methods"])
    said = "the similarity" if metric["kind"] == "cosine" else "the answer"
    out = [f"model: {doc['model']}", f"{said}: {what} = {metric['value']:.4f}"]
    if "attention" in doc["methods"] and "pair" not in doc:
        head = doc["attention"]["head"]
        out.append(
            f"attention: layer {doc['attention']['layer']}, "
            + (f"head {head}" if head else "every head's mean")
        )
    width = max(len(visible(t)) for t in doc["tokens"]) + 2
    out.append(f"{'token':<{width}}" + "".join(f"{HEADINGS[n]:>12}" for n in names))
    for k, token in enumerate(doc["tokens"]):
        out.append(f"{visible(token):<{width}}" + "".join(f"{doc['methods'][n][k]:>12.4f}" for n in names))
    if "ig" in doc:
        ig = doc["ig"]
        out.append(
            f"integrated gradients, {ig['steps']} steps from {ig['baseline']!r} ({ig['rule']}): the scores "
            f"add up to the metric's change but for {ig['completeness_gap']:.4f} (the completeness gap)"
        )
    if "rollout_without_first" in doc:
        top = max(range(len(doc["tokens"])), key=lambda k: doc["rollout_without_first"][k])
        out.append(
            f"rollout puts {doc['methods']['rollout'][0]:.3f} on the first token; without it, the most on "
            f"{visible(doc['tokens'][top])!r} ({doc['rollout_without_first'][top]:.3f})"
        )
    out += [f"Spearman {pair}: {value:.3f}" for pair, value in doc["agreement"].items()]
    return out + [f"note: {n}" for n in doc.get("notes", ())]
