"""``attention-lab linear``: linear attention against softmax, and what its fixed state forgets.

    attention-lab linear                       # the first article's 4 tokens, both ways
    attention-lab linear --recall --dim 64     # N pairs stored, every key asked for
       pairs  softmax   linear    delta    gated
           8    1.000    0.508    1.000    1.000
      …
    attention-lab linear --check --length 1024 # recurrent and chunked against the parallel form
    attention-lab linear --features 256        # random features' error against softmax weights

Several of --recall, --check and --features print one after another (or one JSON document).
"""

from __future__ import annotations

from app.commands.arguments import count, number, report, seed, typed
from core import inputs

MAX_PAIR_COUNTS = 16


def add_arguments(parser) -> None:
    from core.maths.linear import FEATURES_RANGE, LENGTH_RANGE
    from core.maths.recall import BETA_RANGE, DECAY_RANGE, DIM_RANGE, PAIRS_RANGE

    parser.add_argument(
        "--recall", action="store_true", help="store N key → value pairs and ask for every key"
    )
    parser.add_argument(
        "--dim", type=count("--dim", DIM_RANGE[1], DIM_RANGE[0]), default=64, metavar="D",
        help="width of keys and values in --recall, and of the --check inputs (default 64)",
    )  # fmt: skip
    parser.add_argument(
        "--pairs", metavar="N,N,…",
        type=typed(inputs.wholes, "--pairs", PAIRS_RANGE[0], PAIRS_RANGE[1], MAX_PAIR_COUNTS),
        help="numbers of stored pairs (default: D/8 to 8·D, doubling)",
    )  # fmt: skip
    parser.add_argument(
        "--beta", type=number("--beta", *BETA_RANGE), default=None, metavar="B",
        help="softmax's sharpness on unit keys (default √D, scaled attention's)",
    )  # fmt: skip
    parser.add_argument(
        "--decay", type=number("--decay", *DECAY_RANGE), default=0.95, metavar="G",
        help="the gated memory's forgetting factor γ (default 0.95; 1 forgets nothing)",
    )  # fmt: skip
    parser.add_argument(
        "--features", type=count("--features", FEATURES_RANGE[1], FEATURES_RANGE[0]), metavar="M",
        help="random features: their mean weight error against softmax on the first article's example",
    )  # fmt: skip
    parser.add_argument(
        "--temperature", type=number("--temperature", 0.05, 100.0), default=1.0, metavar="T",
        help="softmax temperature of the --features rows (default 1)",
    )  # fmt: skip
    parser.add_argument(
        "--check", action="store_true", help="recurrent and chunked forms against the parallel one"
    )
    parser.add_argument(
        "--length", type=count("--length", LENGTH_RANGE[1], LENGTH_RANGE[0]), default=512, metavar="T",
        help="tokens in --check (default 512)",
    )  # fmt: skip
    parser.add_argument(
        "--chunk", type=count("--chunk", LENGTH_RANGE[1]), default=64, metavar="C",
        help="tokens per chunk in --check (default 64)",
    )  # fmt: skip
    parser.add_argument(
        "--seed", type=seed("--seed"), default=0, help="seed of every random draw (default 0)"
    )
    parser.add_argument("--json", action="store_true", help="print one JSON document instead of text")


def run(args) -> int:
    for flag, value, belongs in (("--pairs", args.pairs, args.recall), ("--beta", args.beta, args.recall)):
        if value is not None and not belongs:
            raise ValueError(f"{flag} sets up the recall experiment; add --recall")
    if not (args.recall or args.check or args.features):
        return _bracket(args)
    doc: dict = {}
    text: list[str] = []
    if args.recall:
        _recall(args, doc, text)
    if args.check:
        from core.maths.linear import causal_check, seeded_inputs

        diffs = causal_check(*seeded_inputs(args.length, args.dim, args.seed), args.chunk)
        doc |= {"length": args.length, "max_diff": diffs}
        text.append(
            f"{args.length} tokens, width {args.dim}, chunks of {args.chunk}: largest difference from the "
            f"parallel form {diffs['recurrent']:.3g} (recurrent), {diffs['chunked']:.3g} (chunked)"
        )
    if args.features:
        from core.maths.linear import DRAWS, feature_error
        from core.maths.qkv import random_example

        ex = random_example(["the", "cat", "sat", "down"], 8, 4, args.seed)
        error = feature_error(
            ex.projections()[0], ex.projections()[1], args.features, args.seed, args.temperature
        )
        doc |= {"features": args.features, "error": error}
        text.append(
            f"{args.features} random features, temperature {args.temperature:g}: mean |weight error| "
            f"{error:.4f} against softmax (4 × 4 weights, {DRAWS} draws)"
        )
    return report(doc, args.json, lambda: text)


def _recall(args, doc: dict, text: list[str]) -> None:
    from core.maths.recall import MEMORIES, default_pairs, recall_sweep

    pairs = args.pairs or default_pairs(args.dim)
    beta = args.beta if args.beta is not None else args.dim**0.5
    sweep = recall_sweep(args.dim, pairs, beta, args.decay, args.seed)
    doc |= sweep.to_json()
    text.append(
        f"keys and values of width {args.dim}; β = {beta:g}, γ = {args.decay:g}; share of keys recalled"
    )
    text.append(f"{'pairs':>7}" + "".join(f"{m:>9}" for m in MEMORIES))
    for i, n in enumerate(sweep.pairs):
        text.append(f"{n:>7}" + "".join(f"{sweep.rates[m][i]:>9.3f}" for m in MEMORIES))


def _bracket(args) -> int:
    """The first article's example computed both ways, and the cost of each."""
    from core.maths.attention import attend
    from core.maths.linear import bracket, elu_plus_one, op_counts
    from core.maths.qkv import random_example

    ex = random_example(["the", "cat", "sat", "down"], 8, 4, args.seed)
    Q, K, V = ex.projections()
    soft = attend(Q, K, V)
    lin = bracket(elu_plus_one(Q), elu_plus_one(K), V)
    counts = op_counts(4, 4)
    doc = {
        "softmax": soft.output.round(6).tolist(),
        "linear": lin.output.round(6).tolist(),
        "state": lin.state.round(6).tolist(),
        "normaliser": lin.normaliser.round(6).tolist(),
        "multiply_adds": {
            "softmax": counts.softmax,
            "linear": counts.linear,
            "linear_wins_from": counts.crossover,
        },
    }

    def lines():
        yield f"the cat sat down: d_model 8, d_k 4, seed {args.seed}"
        yield "softmax(Q·Kᵀ/√d)·V, row by row:"
        yield from ("  " + " ".join(f"{x:7.3f}" for x in row) for row in soft.output)
        yield "φ(Q)·(φ(K)ᵀ·V) / φ(Q)·Σφ(k), φ = elu + 1:"
        yield from ("  " + " ".join(f"{x:7.3f}" for x in row) for row in lin.output)
        yield (
            f"multiply-adds at 4 tokens: {counts.softmax} (softmax) against {counts.linear} (linear); "
            f"linear needs fewer from {counts.crossover} tokens on at this width"
        )

    return report(doc, args.json, lines)
