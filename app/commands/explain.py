"""``attention-lab explain``: one real head's numbers for one query and one key, and why.

    attention-lab explain --text "the cat sat on the mat because the cat" --layer 2 --head 3 \\
        --query 10 --key sat
    layer 2, head 3: query 10 '␣cat' → key 3 '␣sat'
    q·k = 0.12×(−0.40) + … = 1.93; × scale 0.1250 = score 0.241; weight 0.18

then the score split into query part × key part terms (the residual stream's parts, the norm's
scale frozen), and what the head writes through the final norm and the unembedding. Layers, heads
and positions count from 1; a position may also be a token's text where it occurs once. A key
after the query in a causal model is shown with its weight 0 and the reason. On an encoder only
step 1 is shown: the split and the unembedding need a decoder.
"""

from __future__ import annotations

from app.commands.arguments import context_flag, count, read_prompt, report
from app.commands.heads import MAX_LAYERS, echoed
from app.commands.progress import load_model, stage
from core.decoder.sites import tl_row

LISTED = 8  # parts and pairs listed in plain text (the JSON has every part and 50 pairs)


def add_arguments(parser) -> None:
    parser.add_argument("--text", required=True, help="the text the model reads")
    parser.add_argument(
        "--layer", required=True, type=count("--layer", MAX_LAYERS), metavar="L", help="from 1"
    )
    parser.add_argument("--head", required=True, type=count("--head", MAX_LAYERS), metavar="H", help="from 1")
    parser.add_argument(
        "--query", required=True, metavar="I", help="the query token: its position from 1, or its text"
    )
    parser.add_argument(
        "--key", required=True, metavar="J", help="the key token: its position from 1, or its text"
    )
    parser.add_argument(
        "--model",
        default="smollm2",
        metavar="smollm2|minilm|PATH",
        help="a decoder (all steps) or an encoder (step 1)",
    )
    context_flag(parser)
    parser.add_argument("--json", action="store_true", help="print one JSON document instead of text")


def run(args) -> int:
    if not args.text.strip():
        raise ValueError("--text is empty; give a text for the model to read")
    model = load_model(args.model)  # its stage line comes first: the imports below take a while
    from core import models
    from core.interp import head
    from core.interp.token_text import pieces

    cut = []
    if model.kind == models.DECODER:
        ids, cut = read_prompt(model, args.text)
    else:
        ids = model.tokenizer(args.text, truncation=True, max_length=model.max_tokens)["input_ids"]
    tokens = pieces(model, ids)
    i, j = (head.token_position(tokens, getattr(args, n), n) for n in ("query", "key"))
    stage(f"running {model.name}")
    rec = head.record(model, ids)
    step = head.head_step(rec, args.layer - 1, args.head - 1, i, j)
    split = writes = None
    try:
        head.check_split(rec)
    except ValueError as exc:  # an encoder, or a family not split yet: step 1, and why not the rest
        note = str(exc)
    else:
        split = head.why_here(rec, step.layer, step.head, i, j)
        writes = head.what_it_writes(rec, step.layer, step.head, i, j)
        note = ""
    doc = document(model, tokens, step, split, writes, note)
    if cut:
        doc["notes"] = [*cut, *doc.get("notes", ())]
    return report(doc, args.json, lambda: lines(doc, step))


def _r(x: float) -> float:
    return round(float(x), 6)


def document(model, tokens, step, split, writes, note: str) -> dict:
    """The JSON fields the issue names, positions counted from 1."""
    piece = model.tokenizer.decode
    doc = {
        "model": model.name,
        "tokens": list(tokens),
        "layer": step.layer + 1,
        "head": step.head + 1,
        "query": step.i + 1,
        "key": step.j + 1,
        "tl": tl_row("pattern", step.layer, step.head, query=step.i, key=step.j),
        "q": [_r(x) for x in step.q],
        "k": [_r(x) for x in step.k],
        "dot": _r(step.dot),
        "scale": _r(step.scale),
        "score": _r(step.score),
        "masked": step.masked,
        "weight": _r(step.weight),
        "row": [_r(x) for x in step.row],
    }
    if split is not None:
        doc["query_parts"] = [
            {"part": p, "value": _r(v)} for p, v in zip(split.query_parts, split.query_totals, strict=True)
        ]
        doc["key_parts"] = [
            {"part": p, "value": _r(v)} for p, v in zip(split.key_parts, split.key_totals, strict=True)
        ]
        doc["pairs"] = [{"query_part": a, "key_part": b, "value": _r(v)} for a, b, v in split.largest()]
    if writes is not None:
        doc["writes"] = {
            side: [{"token": piece([t]), "value": _r(v)} for t, v in getattr(writes, side)]
            for side in ("up", "down")
        }
        doc["copy"] = {
            "token": piece([writes.key_token]),
            "value": _r(writes.copy),
            "whole": _r(writes.whole),
            "rank": writes.rank,
            "vocabulary": vocabulary_size(model),
        }
    notes = [n for n in (note, split and split.note) if n]  # why not split, or Gemma 2's cap
    if step.masked:
        notes.insert(0, mask_note(step))
    if notes:
        doc["notes"] = notes
    return doc


def vocabulary_size(model) -> int | None:
    """How many tokens the model's unembedding scores (the ranks of what a head writes)."""
    size = getattr(getattr(model.module, "config", None), "vocab_size", None)
    return int(size) if isinstance(size, int) else None


def mask_note(step) -> str:
    return (
        f"key {step.j + 1} comes after query {step.i + 1}: the causal mask adds −∞ to its score "
        f"({step.score:.3f}) before the softmax, so its weight is exp(−∞) = 0"
    )


def lines(doc: dict, step) -> list[str]:
    """The same as plain text."""
    from core.interp.token_text import visible
    from core.maths.explain import dot_terms, num

    tokens = [visible(t) for t in doc["tokens"]]
    out = [
        f"model: {doc['model']}",
        f"tokens ({len(tokens)}): {echoed(tokens, '|')}",
        f"layer {doc['layer']}, head {doc['head']} (key/value head {step.kv_head + 1}): "
        f"query {doc['query']} {tokens[step.i]!r} → key {doc['key']} {tokens[step.j]!r}",
        f"q·k = {dot_terms(step.q, step.k, 3)}",
        f"× scale {num(step.scale, 4)} = score {num(step.score, 4)}; weight {num(step.weight, 4)}",
    ]
    best = max(range(len(doc["row"])), key=doc["row"].__getitem__)
    out.append(f"the query's row: largest weight {num(doc['row'][best], 3)} on {best + 1} {tokens[best]!r}")
    if "query_parts" in doc:
        for side in ("query_parts", "key_parts"):
            ranked = sorted(doc[side], key=lambda p: -abs(p["value"]))[:LISTED]
            out.append(
                f"{side.replace('_', ' ')} (of {len(doc[side])}): "
                + ", ".join(f"{p['part']} {num(p['value'], 3)}" for p in ranked)
            )
        out.append(
            "largest terms: "
            + ", ".join(
                f"{p['query_part']} × {p['key_part']} {num(p['value'], 3)}" for p in doc["pairs"][:LISTED]
            )
        )
    if "writes" in doc:
        for side in ("up", "down"):
            out.append(
                f"writes {side}: "
                + " ".join(f"{visible(t['token'])} {num(t['value'], 2)}" for t in doc["writes"][side])
            )
        c = doc["copy"]
        of = f" of {c['vocabulary']:,}" if c.get("vocabulary") else ""
        out.append(
            f"copies {visible(c['token'])}: {num(c['value'], 3)} through this key "
            f"(its whole output on that token's logit: {num(c['whole'], 3)}; the token ranks "
            f"{c['rank']:,}{of} in the vocabulary by how much this head pushes it up, 1 = the most)"
        )
    out += [f"note: {n}" for n in doc.get("notes", ())]
    return out
