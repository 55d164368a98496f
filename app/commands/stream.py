"""``attention-lab stream``: one token's residual stream through every layer of a decoder.

    attention-lab stream --text "When Mary and John went to the store, John gave a drink to"
    layer  in      out     attn    MLP     cos final  lens
    1      0.66    1.94    1.30    1.15    0.05       ' the'
    …
    the final stream = embeddings + every attention and MLP output (largest difference 2e-06)

For each block: the size (Euclidean norm) of the stream entering and leaving it at the chosen
token, of what attention and the MLP add, the cosine of the stream leaving it with the final
stream, and the token the logit lens reads there. Then the final stream's parts with their
sizes, checked to add up. With ``--norm L``, the norm block L's attention reads the stream
through, written out on the token's stream (``--norm final``: the norm before the unembedding,
and the logits it gives). Layers count from 1; ``--position`` from 0 (the index into the tokens;
default the last).
"""

from __future__ import annotations

from app.commands.arguments import decoder_flags, read_prompt, report, typed
from app.commands.heads import MAX_LAYERS, echoed
from app.commands.progress import load_model, stage
from core import inputs
from core.decoder.sites import tl_row


def add_arguments(parser) -> None:
    parser.add_argument("--text", required=True, help="the text the model reads")
    parser.add_argument(
        "--position", type=int, default=None, metavar="P", help="the token, from 0 (default: the last)"
    )
    parser.add_argument(
        "--norm",
        type=typed(norm_layer),
        metavar="L",
        help="also the norm layer L reads through, written out (from 1; 'final': the last norm)",
    )
    decoder_flags(parser)


def norm_layer(text: str) -> int | str:
    """``--norm``'s value: a layer from 1, or "final"."""
    if text == "final":
        return text
    try:
        return inputs.whole(text, "--norm", 1, MAX_LAYERS)
    except ValueError as exc:
        raise ValueError(f"{exc} Or give 'final' for the final norm.") from None


def run(args) -> int:
    if not args.text.strip():
        raise ValueError("--text is empty; give a text for the model to read")
    model = load_model(args.model, "decoder")  # core.models.DECODER: its stage line comes first
    from core.interp.stream import direct_effects, norm_step, stream_journey
    from core.interp.token_text import pieces

    ids, notes = read_prompt(model, args.text)
    position = len(ids) - 1 if args.position is None else args.position
    if not 0 <= position < len(ids):
        raise ValueError(f"--position {position} does not exist: the text has tokens 0 to {len(ids) - 1}.")
    if isinstance(args.norm, int) and args.norm > model.n_layers:
        raise ValueError(
            f"--norm {args.norm} does not exist: {model.name} has layers 1 to {model.n_layers} (or 'final')"
        )
    stage(f"running {model.name}")
    journey = stream_journey(model, ids, position)
    doc = document(model, pieces(model, ids), journey, direct_effects(model, journey))
    if args.norm is not None:
        layer = model.n_layers if args.norm == "final" else args.norm - 1  # 0-based; layers: the final
        doc["norm"] = norm_document(model, norm_step(model, ids, position, layer))
    if notes:
        doc["notes"] = notes
    return report(doc, args.json, lambda: lines(doc))


def _r(x: float) -> float:
    return round(float(x), 6)


def document(model, tokens, journey, effects) -> dict:
    """The JSON fields: layers from 1, the position from 0; each part's direct effect on the
    logits of the most likely next tokens (``top``)."""
    import numpy as np

    piece = model.tokenizer.decode
    return {
        "model": model.name,
        "tokens": list(tokens),
        "position": journey.position,
        "layers": [
            {
                "layer": n + 1,
                "tl": tl_row("resid_post", n),
                "norm_in": _r(row.norm_in),
                "norm_out": _r(row.norm_out),
                "attn_norm": _r(row.attn_norm),
                "mlp_norm": _r(row.mlp_norm),
                "cos_final": _r(row.cos_final),
                "lens_top": piece([row.lens_top]),
            }
            for n, row in enumerate(journey.rows)
        ],
        "top": [piece([t]) for t in effects.tokens],
        "parts": [
            {
                "name": name,
                "tl": part_row(k),
                "norm": _r(np.linalg.norm(vector)),
                "direct": [_r(v) for v in direct],
            }
            for k, (name, vector, direct) in enumerate(
                zip(journey.names, journey.parts, effects.values[:-1], strict=True)
            )
        ],
        "biases_direct": [_r(v) for v in effects.values[-1]],
        "sum_error": float(journey.sum_error),
    }


def norm_document(model, step) -> dict:
    """The norm's steps: its input's mean square, the scale, the check against the model's own."""
    return {
        "layer": "final" if step.layer == model.n_layers else step.layer + 1,
        "kind": step.kind,
        "mean": _r(step.mean),
        "mean_square": _r(step.mean_square),
        "eps": _r(step.eps),
        "scale": _r(step.scale),
        "gain_mean": _r(step.gain.mean()),
        "module_error": float(step.module_error),
        "scaled_change": float(step.scaled_change),
        "top": [{"token": model.tokenizer.decode([t]), "logit": _r(v)} for t, v in step.top],
    }


def norm_lines(norm: dict | None) -> list[str]:
    if norm is None:
        return []
    from core.interp.token_text import visible

    where = "the final norm" if norm["layer"] == "final" else f"the norm layer {norm['layer']} reads through"
    centred = (
        ", after taking away its mean {:.4g},".format(norm["mean"]) if norm["kind"] == "LayerNorm" else ""
    )
    out = [
        f"{where} ({norm['kind']}): the stream{centred} has mean square {norm['mean_square']:.4g}; "
        f"times 1/√({norm['mean_square']:.4g} + {norm['eps']:g}) = {norm['scale']:.4g}, then the "
        f"learned gain (mean {norm['gain_mean']:.4g}); the model's own norm differs by "
        f"{norm['module_error']:.1e}",
        f"the stream times 10 reads the same: the output changes by {norm['scaled_change']:.1e}",
    ]
    if norm["top"]:
        out.append(
            "through the unembedding, the largest logits: "
            + ", ".join(f"{visible(q['token'])!r} {q['logit']:.3f}" for q in norm["top"])
        )
    return out


def lines(doc: dict) -> list[str]:
    """The same as plain text: a row per layer, then the parts, largest first."""
    from core.interp.token_text import visible

    tokens = [visible(t) for t in doc["tokens"]]
    p = doc["position"]
    out = [
        f"model: {doc['model']}",
        f"tokens ({len(tokens)}): {echoed(tokens, '|')}",
        f"the stream of token {p} {tokens[p]!r}, entering and leaving each layer (sizes are norms)",
        f"{'layer':<6} {'in':>9} {'out':>9} {'attn':>9} {'MLP':>9} {'cos final':>10}  lens",
    ]
    out += [
        f"{r['layer']:<6} {r['norm_in']:>9.3f} {r['norm_out']:>9.3f} {r['attn_norm']:>9.3f} "
        f"{r['mlp_norm']:>9.3f} {r['cos_final']:>10.3f}  {visible(r['lens_top'])!r}"
        for r in doc["layers"]
    ]
    largest = sorted(doc["parts"], key=lambda part: -part["norm"])[:8]
    out.append(
        "largest parts of the final stream: " + ", ".join(f"{q['name']} {q['norm']:.3f}" for q in largest)
    )
    out.append(
        f"the final stream = embeddings + every attention and MLP output "
        f"(largest difference {doc['sum_error']:.1e})"
    )
    top = doc["top"][0]
    pushes = sorted(doc["parts"], key=lambda part: -part["direct"][0])[:5]
    out.append(
        f"largest direct pushes on {visible(top)!r}: "
        + ", ".join(f"{q['name']} {q['direct'][0]:+.3f}" for q in pushes)
    )
    return out + norm_lines(doc.get("norm")) + [f"note: {n}" for n in doc.get("notes", ())]


def part_row(k: int) -> dict:
    """Part ``k`` of the final stream as TransformerLens names it: the stream entering block 0,
    then each block's attention output and MLP output in turn."""
    if k == 0:
        return tl_row("resid_pre", 0)
    layer, mlp = divmod(k - 1, 2)
    return tl_row("mlp_out" if mlp else "attn_out", layer)
