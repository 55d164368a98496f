"""``attention-lab steer``: steer a decoder with the difference of two texts' streams.

    attention-lab steer --text "I went up to my friend and said" --plus " food" \\
        --minus " sports" --layer 10 --strength 0.4
    vector: 'I talk about food' − 'I talk about sports' at their last tokens, the stream leaving …
    normal:  I went up to my friend and said, "I'm going to the party tonight. …
    steered: I went up to my friend and said, "I'm going to the market tomorrow, I'll have some of the food …

Both completions are greedy and equally long; the steered run adds strength × vector to the stream
leaving the layer at every position but the first (the attention sink), in the prompt and in
every new token, or with ``--mode remove`` takes the vector's direction out of it. Each text is read
after ``--prefix``, a word with the space that separates it, and printed as read. Layers count
from 1.
"""

from __future__ import annotations

from app.commands.arguments import count, decoder_flags, number, read_prompt, report
from app.commands.heads import MAX_LAYERS
from app.commands.progress import counter, load_model, stage

SWEEP_POINTS = 21
SWAMPED = 10  # a note when strength × the vector's size passes this many times the streams' size


def add_arguments(parser) -> None:
    from core.interp.steering import MODES, PREFIX

    parser.add_argument("--text", required=True, help="the prompt to continue")
    parser.add_argument("--plus", required=True, metavar="A", help="the text to steer towards")
    parser.add_argument("--minus", required=True, metavar="B", help="the text to steer away from")
    parser.add_argument(
        "--layer", required=True, type=count("--layer", MAX_LAYERS), metavar="L",
        help="the stream leaving this layer (from 1)",
    )  # fmt: skip
    parser.add_argument(
        "--strength", type=number("--strength", -1e300, 1e300), required=True, metavar="S",
        help="how much of the vector (0: none; on SmolLM2 at layer 10 the text breaks down near 1)",
    )  # fmt: skip
    parser.add_argument(
        "--prefix", default=PREFIX, metavar="P", help=f"read before each of A and B (default {PREFIX!r})"
    )
    parser.add_argument(
        "--generate", type=count("--generate", 500), default=20, metavar="N", help="new tokens (default 20)"
    )
    parser.add_argument(
        "--mode", choices=MODES, default="add", help="add the vector, or remove its direction"
    )
    parser.add_argument(
        "--sweep", nargs=2, type=number("--sweep", -1e300, 1e300), metavar=("FROM", "TO"),
        help=f"also the next token at {SWEEP_POINTS} strengths from FROM to TO: its probability and entropy",
    )  # fmt: skip
    parser.add_argument(
        "--token",
        metavar="T",
        help="the next token the sweep follows, one token (default: the normal completion's first)",
    )
    decoder_flags(parser)


def run(args) -> int:
    if not args.text.strip():
        raise ValueError("--text is empty; give a prompt to continue")
    if args.plus == args.minus:
        raise ValueError("--plus and --minus are the same text, so the vector would be zero; change one")
    if args.token is not None and args.sweep is None:
        raise ValueError("--token names the token a --sweep follows; give --sweep FROM TO too")
    if args.sweep is not None and args.mode == "remove":
        raise ValueError(
            "--sweep varies how much of the vector is added; it has no meaning with --mode remove"
        )
    model = load_model(args.model, "decoder")  # core.models.DECODER: its stage line comes first
    from core.interp.steering import greedy, steer, steering_vector

    if args.layer > model.n_layers:
        raise ValueError(
            f"--layer {args.layer} does not exist: {model.name} has layers 1 to {model.n_layers}"
        )
    ids, cut = read_prompt(model, args.text)
    stage("the vector")
    vector = steering_vector(model, args.plus, args.minus, args.layer - 1, args.prefix)
    normal = greedy(model, ids, args.generate, progress=counter("the normal completion, tokens"))
    edits = steer(vector, args.strength, args.mode)
    steered = greedy(model, ids, args.generate, edits, counter("the steered completion, tokens"))
    doc = document(model, args, vector, normal, steered, cut)
    if args.sweep is not None:
        doc["sweep"] = sweep_document(model, args, ids, vector, normal)
    return report(doc, args.json, lambda: lines(doc, args))


def sweep_document(model, args, ids, vector, normal) -> dict:
    """The next token at each strength of ``--sweep``: the followed token's probability, the
    entropy and the top token."""
    import numpy as np

    from core.interp.ranking import answer_token
    from core.interp.steering import strength_sweep

    token = normal.ids[0]
    if args.token is not None:
        token = answer_token(model.tokenizer, args.token, args.text, "--token").id
    stage("the strength sweep")
    sweep = strength_sweep(
        model, ids, vector, np.linspace(*args.sweep, SWEEP_POINTS), token, counter("strengths")
    )
    decode = model.tokenizer.decode
    return {
        "token": decode([token]),
        "points": [
            {"strength": round(float(s), 6), "prob": round(float(p), 6), "entropy": round(float(e), 6),
             "top": decode([int(t)]) if t >= 0 else None}
            for s, p, e, t in zip(sweep.strengths, sweep.prob, sweep.entropy, sweep.top, strict=True)
        ],
    }  # fmt: skip


def document(model, args, vector, normal, steered, notes: list[str]) -> dict:
    decode = model.tokenizer.decode
    doc = {
        "model": model.name,
        "layer": args.layer,
        "strength": args.strength,
        "mode": args.mode,
        "prefix": args.prefix,
        "read": {"plus": vector.read[0], "minus": vector.read[1]},
        "vector_norm": round(vector.norm, 6),
        "stream_norm": round(vector.stream_norm, 6),
        "normal": {"text": decode(list(normal.ids)), "ids": list(normal.ids)},
        "steered": {"text": decode(list(steered.ids)), "ids": list(steered.ids)},
    }
    notes = list(notes)  # what a cut prompt lost, then what the run says
    added = abs(args.strength) * vector.norm
    if args.mode == "add" and added > SWAMPED * vector.stream_norm:
        notes.append(
            f"strength × the vector's size is {added:.4g}, {added / vector.stream_norm:.3g} times the size "
            f"of the streams there ({vector.stream_norm:.4g}): the steered stream is almost only the vector."
        )
    if steered.overflow is not None:
        notes.append(
            f"The steered logits stopped being finite numbers at new token {steered.overflow + 1}: "
            "the strength is too large for 32-bit floats, so the completion ends there."
        )
    if notes:
        doc["notes"] = notes
    return doc


def lines(doc: dict, args) -> list[str]:
    what = "remove its direction" if doc["mode"] == "remove" else f"strength {doc['strength']:g}"
    return [
        f"model: {doc['model']}",
        f"vector: {doc['read']['plus']!r} − {doc['read']['minus']!r} at their last tokens, the stream "
        f"leaving layer {doc['layer']} (size {doc['vector_norm']:.3f}; the streams there "
        f"{doc['stream_norm']:.3f}); {what}",
        f"normal:  {args.text}{doc['normal']['text']}",
        f"steered: {args.text}{doc['steered']['text']}",
        *(f"note: {n}" for n in doc.get("notes", ())),
        *sweep_lines(doc.get("sweep")),
    ]


def sweep_lines(sweep: dict | None) -> list[str]:
    if sweep is None:
        return []
    from core.interp.token_text import visible

    head = f"{'strength':>10} {'p(' + visible(sweep['token']) + ')':>12} {'entropy':>9}  top"
    return ["the next token by strength:", head] + [
        f"{q['strength']:>10.3g} {q['prob']:>12.4f} {q['entropy']:>9.3f}  "
        + ("none (the logits overflowed)" if q["top"] is None else repr(visible(q["top"])))
        for q in sweep["points"]
    ]
