"""``attention-lab patch``: activation patching between a clean and a corrupted prompt.

    attention-lab patch --clean "When Mary and John went to the store, John gave a drink to" \\
        --corrupt "When Mary and John went to the store, Mary gave a drink to" \\
        --target Mary --foil John --what resid

copies the clean run's residual stream into the corrupted run at one (layer, position) at a
time and prints how much of logit(target) − logit(foil) comes back: 0 = the corrupted run's
value, 1 = the clean run's. --direction noise copies the other way; --approx estimates every
cell from two forward passes and one backward pass (attribution patching). Layers and heads count from 1.
"""

from __future__ import annotations

import json
import sys

from app.commands.arguments import context_flag, pair_arguments
from app.commands.progress import counter, load_model, stage
from core.decoder.sites import tl_row

WHATS = ("resid", "attn", "mlp", "heads")
DIRECTIONS = ("denoise", "noise")  # core.interp.patching.DIRECTIONS, without importing NumPy for the parser
NAMES = {
    "resid": "residual stream",
    "attn": "attention outputs",
    "mlp": "MLP outputs",
    "heads": "head outputs",
}


def add_arguments(parser) -> None:
    pair_arguments(parser)
    parser.add_argument(
        "--what",
        choices=WHATS,
        default="resid",
        help="resid: the stream after the embeddings and each layer; attn, mlp: each layer's outputs "
        "per position; heads: each head's output at every position",
    )
    parser.add_argument(
        "--direction",
        choices=DIRECTIONS,
        default="denoise",
        help="denoise: clean into corrupted (default); noise: corrupted into clean",
    )
    parser.add_argument(
        "--approx", action="store_true", help="attribution patching: two forward passes and one backward pass"
    )
    parser.add_argument(
        "--model", default="smollm2", metavar="smollm2|PATH", help="'smollm2' (once added) or a decoder"
    )
    context_flag(parser)
    parser.add_argument("--json", action="store_true", help="print one JSON document instead of text")


def run(args) -> int:
    if not args.model:
        raise ValueError("--model is empty; give 'smollm2' or a model folder")
    model = load_model(args.model, "decoder")  # core.models.DECODER: its stage line comes first
    from core.interp.patching import patch, prepare

    pair = prepare(model, args.clean, args.corrupt, args.target, args.foil)
    if args.approx:
        from core.interp.attribution import attribute

        stage("two forward passes and one backward pass")
        grid = attribute(model, pair, args.direction).grid(args.what)
    else:
        stage(f"patching the {NAMES[args.what]}")
        grid = patch(model, pair, args.what, args.direction, progress=counter("patched runs"))
    if args.json:
        doc = {
            "model": model.name,
            "clean": {"tokens": list(pair.clean_pieces), "metric": round(grid.clean, 6)},
            "corrupt": {"tokens": list(pair.corrupt_pieces), "metric": round(grid.corrupt, 6)},
            "target": pair.target.text,
            "foil": pair.foil.text,
            "what": args.what,
            "direction": args.direction,
            "approx": args.approx,
            "rows": list(grid.rows),
            "columns": list(grid.columns),
            "values": [[round(float(v), 6) for v in row] for row in grid.values],
            "raw": [[round(float(v), 6) for v in row] for row in grid.raw],
            "tl": {
                "rows": tl_rows(args.what, model.n_layers),
                "columns": "head" if args.what == "heads" else "pos",
            },
        }
        json.dump(doc, sys.stdout, ensure_ascii=False)
        print()
        return 0
    for line in lines(model, pair, grid, args):
        print(line)
    return 0


def lines(model, pair, grid, args) -> list[str]:
    """The pair, both metrics and the grid as a table of normalised values."""
    from core.interp.token_text import visible

    out = [f"model: {model.name}"]
    target, foil = visible(pair.target.text), visible(pair.foil.text)
    for name, pieces, metric in (
        ("clean", pair.clean_pieces, grid.clean),
        ("corrupt", pair.corrupt_pieces, grid.corrupt),
    ):
        split = "|".join(visible(p) for p in pieces)
        out.append(f"{name:<7} ({len(pieces)} tokens): {split}")
        out.append(f"        logit {target} − logit {foil} = {metric:.3f}")
    how = "attribution estimate" if args.approx else "patched runs"
    out.append(f"{NAMES[args.what]}, {args.direction} ({how}); 0 = corrupted, 1 = clean:")
    width = max(len(r) for r in grid.rows)
    out.append(" " * width + " " + " ".join(f"{c.split(' ', 1)[0]:>6}" for c in grid.columns))
    for label, row in zip(grid.rows, grid.values, strict=True):
        out.append(f"{label:<{width}} " + " ".join(f"{v:6.2f}" for v in row))
    if grid.columns[0][0].isdigit():
        out.append("columns: " + "  ".join(grid.columns))
    return out


def tl_rows(what: str, layers: int) -> list[dict]:
    """The grid's rows as TransformerLens names them: the stream entering block 0 and leaving each
    block, each block's attention or MLP output, or each layer's heads' z (columns: head index)."""
    if what == "resid":
        return [tl_row("resid_pre", 0)] + [tl_row("resid_post", n) for n in range(layers)]
    site = {"attn": "attn_out", "mlp": "mlp_out", "heads": "z"}[what]
    return [tl_row(site, n) for n in range(layers)]
