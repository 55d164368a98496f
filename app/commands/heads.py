"""``attention-lab heads``: what a real model's heads attend to, printed or as JSON.

    attention-lab heads --text "The trophy didn't fit in the suitcase because it was too big." \\
        --find it trophy
    tokens (17): [CLS] the trophy didn ' t fit in the suitcase because it was too big . [SEP]
    it → trophy: layer 4, head 2: 0.58

    attention-lab heads --model smollm2 --pattern induction
    induction score (2 × 30 random tokens, seed 0): layer 19, head 7: 0.85

Layers and heads are numbered from 1, as people count them. Without --text, --pattern previous
and sink read the Real model panel's default sentence.
"""

from __future__ import annotations

import json
import sys

from app.commands.arguments import count
from app.commands.progress import load_model, stage
from core.decoder.sites import tl_row

MAX_LAYERS = 1000  # more layers or heads than any model the app opens; the model then says its own
TOP = 5  # heads listed after the best one in the plain-text ranking
PATTERNS = {
    "induction": "induction score",
    "previous": "previous-token score",
    "sink": "weight on the first token",
}
RANDOM_TOKENS, SEED = 30, 0  # the induction pattern's random sequence: 2 × 30 tokens, seed 0
ECHO_ENDS = 12  # tokens echoed from each end of a long text


def add_arguments(parser) -> None:
    parser.add_argument(
        "--text",
        help="the sentence to read (not with --pattern induction; --pattern previous and sink "
        "read the trophy sentence without it)",
    )
    parser.add_argument("--text-b", metavar="TEXT", help="a second sentence, read as a pair with [SEP]")
    parser.add_argument(
        "--model",
        default="minilm",
        metavar="minilm|smollm2|PATH|ID",
        help="'minilm' (bundled), 'smollm2' (once added), a local model folder, or a model id in the "
        "local Hugging Face cache (attention-lab models list shows them)",
    )
    parser.add_argument(
        "--layer",
        type=count("--layer", MAX_LAYERS),
        metavar="L",
        help="print the weights of this layer (from 1)",
    )
    parser.add_argument(
        "--head", type=count("--head", MAX_LAYERS), metavar="H", help="… and this head (from 1)"
    )
    parser.add_argument(
        "--find", nargs=2, metavar=("FROM", "TO"), help="rank every head by the weight FROM puts on TO"
    )
    parser.add_argument(
        "--pattern",
        choices=PATTERNS,
        help="rank every head by a pattern: induction (on random tokens repeated twice; decoders only), "
        "previous (weight on the token before), sink (weight on the first token)",
    )
    parser.add_argument("--words", action="store_true", help="join sub-word pieces into words first")
    parser.add_argument("--json", action="store_true", help="print one JSON document instead of text")


def run(args) -> int:
    if args.pattern == "induction":
        return run_induction(args)
    if args.text is None and args.pattern is not None:
        from core.models.attention_run import TROPHY

        args.text = TROPHY
    if args.text is None:
        raise ValueError("give --text, the sentence to read (only --pattern reads a text of its own)")
    if (args.layer is None) != (args.head is None):
        raise ValueError("give --layer and --head together")
    if args.text_b is not None and not args.text_b.strip():
        raise ValueError("--text-b is empty; leave it out to read one sentence")
    model = load_model(args.model)  # its stage line comes first: the imports below take a while
    from core import models
    from core.maths.head_analysis import to_words
    from core.printing import table

    stage(f"running {model.name}")
    result = models.run(model, args.text, args.text_b)
    if args.words:
        result = to_words(result)
    n_layers, n_heads, t, _ = result.shape
    weights = None
    if args.layer is not None:
        if not (1 <= args.layer <= n_layers and 1 <= args.head <= n_heads):
            raise ValueError(f"{model.name} has layers 1…{n_layers} and heads 1…{n_heads}")
        weights = result.attentions[args.layer - 1, args.head - 1].astype(float)
    ranking = models.find_head(result, *args.find) if args.find else None
    pattern = pattern_ranking(result, args.pattern) if args.pattern else None

    if args.json:
        doc = {
            "model": model.name,
            "tokens": list(result.labels),
            "shape": [n_layers, n_heads, t, t],
            "is_causal": result.is_causal,
            "dropped_tokens": result.dropped,
        }
        if weights is not None:
            tl = tl_row("pattern", args.layer - 1, args.head - 1)
            doc.update(layer=args.layer, head=args.head, tl=tl, weights=weights.round(6).tolist())
        if ranking is not None:
            best = ranking.best
            doc["find"] = {
                "from": args.find[0],
                "to": args.find[1],
                "layer": best.layer + 1,
                "head": best.head + 1,
                "tl": tl_row("pattern", best.layer, best.head),
                "weight": round(best.score, 6),
                "ranking": [
                    {
                        "layer": s.layer + 1,
                        "head": s.head + 1,
                        "weight": round(s.score, 6),
                        "tl": tl_row("pattern", s.layer, s.head),
                    }
                    for s in ranking.ranked()
                ],
            }
        if pattern is not None:
            doc["pattern"] = pattern_document(args.pattern, pattern)
        json.dump(doc, sys.stdout, ensure_ascii=False)
        print()
        return 0

    kind = "decoder, causal" if result.is_causal else "encoder"
    print(f"model: {model.name} ({n_layers} layers × {n_heads} heads, {kind})")
    print(f"tokens ({t}): {echoed(result.labels)}")
    if result.dropped:
        print(f"note: the text was cut to {t} tokens; {result.dropped} tokens were dropped")
    if weights is not None:
        print(f"\nlayer {args.layer}, head {args.head} (rows look at columns; each row sums to 1)")
        print(table(weights, result.labels, result.labels, "{:.2f}"))
    for shown in (ranking, pattern):
        if shown is not None:
            print_ranking(shown)
    return 0


def echoed(labels, sep: str = " ") -> str:
    """The tokens as read, joined by ``sep``; of a long text only the first and last ECHO_ENDS."""
    if len(labels) <= 3 * ECHO_ENDS:
        return sep.join(labels)
    hidden = len(labels) - 2 * ECHO_ENDS
    return f"{sep.join(labels[:ECHO_ENDS])} … ({hidden} tokens) … {sep.join(labels[-ECHO_ENDS:])}"


def pattern_ranking(result, pattern: str):
    """The HeadRanking of ``pattern`` ("previous" or "sink") on one run's weights."""
    from core.interp.sinks import sink_scores
    from core.maths.head_analysis import HeadRanking, previous_token

    score = previous_token(result) if pattern == "previous" else sink_scores(result.attentions)
    return HeadRanking(score, PATTERNS[pattern])


def pattern_document(pattern: str, ranking) -> dict:
    best = ranking.best
    return {
        "name": pattern,
        "layer": best.layer + 1,
        "head": best.head + 1,
        "tl": tl_row("pattern", best.layer, best.head),
        "score": round(best.score, 6),
        "ranking": [
            {
                "layer": s.layer + 1,
                "head": s.head + 1,
                "score": round(s.score, 6),
                "tl": tl_row("pattern", s.layer, s.head),
            }
            for s in ranking.ranked()
        ],
    }


def print_ranking(ranking) -> None:
    print(f"\n{ranking.what}: {ranking.best}")
    for score in ranking.ranked(TOP + 1)[1:]:
        print(f"  then {score}")


def run_induction(args) -> int:
    """Rank a decoder's heads by induction score on random tokens repeated twice."""
    given = {"--text": args.text, "--text-b": args.text_b, "--layer": args.layer, "--find": args.find}
    clashing = [flag for flag, value in given.items() if value is not None] + ["--words"] * args.words
    if clashing:
        raise ValueError(f"--pattern induction reads its own random tokens; leave out {', '.join(clashing)}")
    model = load_model(args.model)
    from core import models
    from core.interp.induction import random_induction_test
    from core.maths.head_analysis import HeadRanking

    models.check_kind(model.name, model.kind, models.DECODER)
    stage(f"running {model.name} on 2 × {RANDOM_TOKENS} random tokens")
    test = random_induction_test(model, RANDOM_TOKENS, SEED)
    what = f"{PATTERNS['induction']} (2 × {RANDOM_TOKENS} random tokens, seed {SEED})"
    ranking = HeadRanking(test.induction, what)
    if args.json:
        doc = {
            "model": model.name,
            "random_tokens": RANDOM_TOKENS,
            "seed": SEED,
            "loss_first_copy": round(test.loss_first, 6),
            "loss_second_copy": round(test.loss_second, 6),
            "pattern": pattern_document("induction", ranking),
        }
        json.dump(doc, sys.stdout, ensure_ascii=False)
        print()
        return 0
    print(f"model: {model.name} ({model.n_layers} layers × {model.n_heads} heads)")
    print_ranking(ranking)
    print(f"loss: first copy {test.loss_first:.2f} nats, second copy {test.loss_second:.2f} nats")
    return 0
