"""``attention-lab atlas``: every head of a model scored at once on two probes, and what it copies.

    attention-lab atlas
    model: SmolLM2-135M-Instruct (30 layers × 9 heads), text 89 tokens, 40 random tokens twice
    previous_token   best L17 H1 0.730 · L… …
    …

The scores (core.interp.atlas): previous token, first token (the sink), self on a natural text;
duplicate token and induction on random tokens repeated; the copying score of each head's OV
circuit. ``--qk L H`` adds the 2-D cloud of that head's queries and keys over both probes.
An encoder (``--model minilm``) gets the scores that apply to it; "not_applicable" says why the
others do not. Layers and heads count from 1.
"""

from __future__ import annotations

from app.commands.arguments import count, decoder_flags, report, seed
from app.commands.heads import MAX_LAYERS
from app.commands.progress import load_model, stage
from core.decoder.sites import tl_row

TOP = 3  # heads named per score in the text
ANSWER = "When Mary and John went to the store, John gave a drink to"


def add_arguments(parser) -> None:
    from core.interp.atlas import LENGTH

    parser.add_argument("--text", default=None, help="the natural text probe (default: a built-in paragraph)")
    parser.add_argument(
        "--length", type=count("--length", 100_000, low=2), default=LENGTH, metavar="N",
        help=f"random tokens in each copy of the repeated probe (default {LENGTH})",
    )  # fmt: skip
    parser.add_argument("--seed", type=seed("--seed"), default=0, metavar="S", help="the random tokens' seed")
    parser.add_argument(
        "--answer", default=ANSWER, metavar="TEXT",
        help="with --target and --foil: each head's direct share of logit(target) − logit(foil) after it",
    )  # fmt: skip
    parser.add_argument("--target", default=None, metavar="T", help="the answer, one token (with --foil)")
    parser.add_argument(
        "--foil", default=None, metavar="F", help="the one token it is weighed against (with --target)"
    )
    parser.add_argument(
        "--qk", nargs=2, type=count("--qk", MAX_LAYERS), metavar=("L", "H"),
        help="also the 2-D cloud of head H of layer L: its queries and keys over both probes",
    )  # fmt: skip
    decoder_flags(parser)


def run(args) -> int:
    from core.interp.atlas import NATURAL, direct_map, head_atlas, qk_cloud
    from core.interp.ranking import answer_pair

    text = NATURAL if args.text is None else args.text
    if not text.strip():
        raise ValueError("--text is empty; give a text of at least two tokens, or leave it out")
    if (args.target is None) != (args.foil is None):
        raise ValueError("--target and --foil go together: give both, or neither")
    if args.target is not None and not args.answer.strip():
        raise ValueError("--answer is empty; give the text the target and foil continue, or leave it out")
    model = load_model(args.model)  # a decoder, or an encoder with the scores that apply to it
    if args.qk is not None and (args.qk[0] > model.n_layers or args.qk[1] > model.n_heads):
        raise ValueError(
            f"--qk {args.qk[0]} {args.qk[1]} does not exist: {model.name} has layers 1 to "
            f"{model.n_layers} and heads 1 to {model.n_heads}"
        )
    direct = None
    if args.target is not None and model.kind != "decoder":
        raise ValueError(f"--target and --foil need a decoder: {model.name} is an encoder, with no logits")
    if args.target is not None:  # first: a target and foil that make no answer are said at once
        stage("each head's direct share of the answer")
        shares, notes = direct_map(model, args.answer, args.target, args.foil)
        target, foil = answer_pair(model.tokenizer, args.target, args.foil, args.answer)  # as read
        direct = {"answer": args.answer, "target": target.text, "foil": foil.text,
                  "shares": rounded(shares), "notes": list(notes)}  # fmt: skip
    stage(f"scoring the heads of {model.name}")
    atlas = head_atlas(model, text, args.length, args.seed)
    doc = {
        "model": model.name,
        "layers": model.n_layers,
        "heads": model.n_heads,
        "text_ids": list(atlas.text_ids),
        "repeat_ids": list(atlas.repeat_ids),
        "scores": {
            name: [[round(float(v), 6) for v in row] for row in s] for name, s in atlas.scores.items()
        },
    }
    if atlas.missing:
        doc["not_applicable"] = atlas.missing
    if atlas.cut:
        doc["notes"] = [atlas.cut]
    if direct is not None:
        doc["direct"] = direct
    if args.qk is not None:
        cloud = qk_cloud(atlas, args.qk[0] - 1, [args.qk[1] - 1])
        rows = zip(cloud.points, cloud.is_query, cloud.probe, cloud.position, strict=True)
        doc["qk"] = {
            "layer": args.qk[0],
            "head": args.qk[1],
            "tl": tl_row("pattern", args.qk[0] - 1, args.qk[1] - 1),
            "scale": round(cloud.scale, 6),
            "points": [
                {"kind": "query" if q else "key", "probe": ("text", "repeat")[p], "position": int(t),
                 "x": round(float(x), 6), "y": round(float(y), 6)}
                for (x, y), q, p, t in rows
            ],
        }  # fmt: skip
    return report(doc, args.json, lambda: lines(doc, atlas.n))


def rounded(grid) -> list[list[float]]:
    return [[round(float(v), 6) for v in row] for row in grid]


def lines(doc: dict, n: int) -> list[str]:
    import numpy as np

    out = [
        f"model: {doc['model']} ({doc['layers']} layers × {doc['heads']} heads); the text "
        f"{len(doc['text_ids'])} tokens, {n} random tokens twice",
        f"the {TOP} highest heads of each score (layer, head from 1), and its mean over every head:",
    ]
    for name, rows in doc["scores"].items():
        grid = np.asarray(rows)
        best = np.argsort(-grid, axis=None)[:TOP]
        named = " · ".join(
            f"L{k // grid.shape[1] + 1} H{k % grid.shape[1] + 1} {grid.flat[k]:.3f}" for k in best
        )
        out.append(f"{name:<16} {named}   mean {grid.mean():.3f}")
    out += [f"{name:<16} does not apply: {why}" for name, why in doc.get("not_applicable", {}).items()]
    out += [f"note: {n}" for n in doc.get("notes", ())]
    if "direct" in doc:
        d, grid = doc["direct"], np.asarray(doc["direct"]["shares"])
        best = np.argsort(-np.abs(grid), axis=None)[:TOP]
        named = " · ".join(
            f"L{k // grid.shape[1] + 1} H{k % grid.shape[1] + 1} {grid.flat[k]:+.3f}" for k in best
        )
        what = f"logit({d['target']!r}) − logit({d['foil']!r})"
        out.append(f"direct share of {what} (largest in size): {named}")
        out += [f"note: {n}" for n in d["notes"]]
    if "qk" in doc:
        qk = doc["qk"]
        out.append(
            f"layer {qk['layer']} head {qk['head']}: {len(qk['points'])} queries and keys in 2-D "
            f"(keys shifted to the queries' mean; queries × {qk['scale']:.4g}, keys ÷ it); --json lists them"
        )
    return out
