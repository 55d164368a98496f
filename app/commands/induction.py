"""``attention-lab induction``: train a tiny attention-only transformer and watch an induction head form.

    attention-lab induction --seed 0 --steps 600
     step  loss 1st half  loss repeat  best induction head    best previous-token head
        0          4.168        4.172  layer 2, head 3: 0.02  layer 1, head 1: 0.07
      …

Layers and heads are numbered from 1, as people count them. The JSON is a list of checkpoints with
``step``, ``loss_first``, ``loss_second``, ``induction`` and ``previous`` (layer → head).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from app.commands.arguments import count, number
from app.commands.progress import importing, working
from core.models.advice import models_advice

HEADER = (
    f"{'step':>5}  {'loss 1st half':>13}  {'loss repeat':>11}  {'best induction head':22}  "
    "best previous-token head"
)


def add_arguments(parser) -> None:
    from core.lab.settings import LIMITS, InductionSettings

    def whole(flag: str, key: str):
        return count(flag, int(LIMITS[key].high), int(LIMITS[key].low))

    default = InductionSettings()
    parser.add_argument(
        "--seed", type=whole("--seed", "seed"), default=default.seed, help="seed of the weights and the data"
    )
    parser.add_argument(
        "--steps",
        type=whole("--steps", "steps"),
        default=default.steps,
        help=f"training steps (default {default.steps})",
    )
    layers = LIMITS["layers"]
    parser.add_argument(
        "--layers",
        type=whole("--layers", "layers"),
        default=default.layers,
        help=f"attention-only layers, {int(layers.low)} to {int(layers.high)} (default {default.layers}); "
        "an induction head needs 2: it reads what a previous-token head in layer 1 wrote",
    )
    parser.add_argument(
        "--heads",
        type=whole("--heads", "heads"),
        default=default.heads,
        help=f"heads per layer (default {default.heads})",
    )
    parser.add_argument(
        "--lr",
        type=number("--lr", LIMITS["lr"].low, LIMITS["lr"].high),
        default=default.lr,
        help=f"AdamW learning rate (default {default.lr:g})",
    )
    parser.add_argument("--json", metavar="PATH", help="also write the checkpoints as JSON")


def best_head(scores) -> str:
    """'layer 2, head 3: 0.81' for the highest score of an (L, H) array."""
    from core.maths.head_analysis import HeadRanking

    return str(HeadRanking(scores, "").best)


def format_row(checkpoint) -> str:
    """One table line for a Checkpoint."""
    c = checkpoint
    return (
        f"{c.step:5d}  {c.loss_first:13.3f}  {c.loss_second:11.3f}  {best_head(c.induction):22}  "
        f"{best_head(c.previous)}"
    )


def run(args) -> int:
    from core.lab.settings import InductionSettings

    importing("torch")
    try:
        from core.lab.data import shortest
        from core.lab.settings import first_formed
        from core.lab.training import InductionRun
    except ImportError as exc:
        raise ValueError(f"Training needs torch. {models_advice()}") from exc

    if args.json:
        path = Path(args.json)
        if path.is_dir():
            raise OSError(f"cannot write {path}: it is a folder; give a file name")
        if not path.parent.is_dir():
            raise OSError(f"cannot write {path}: the folder {path.parent} does not exist")
    run = InductionRun(
        InductionSettings(seed=args.seed, steps=args.steps, lr=args.lr, layers=args.layers, heads=args.heads)
    )
    s = run.settings
    print(
        f"{s.layers} layer{'s' * (s.layers > 1)} × {s.heads} heads, width {s.width}, vocabulary {s.vocab}, "
        f"AdamW lr {s.lr:g}, seed {s.seed}; trained on random blocks of {shortest(s.length)}…{s.length} "
        f"tokens repeated to {2 * s.length}, batch {s.batch}; measured on blocks of {s.length} shown twice"
    )
    print(HEADER, flush=True)
    checkpoints = []

    def reached() -> str:  # asked by the heartbeat while a checkpoint is some way off
        return f"step {run.step} of {s.steps}"

    working("training to the first checkpoint", reached)
    try:
        for checkpoint in run.train():
            checkpoints.append(checkpoint)
            print(format_row(checkpoint), flush=True)
            working("training to the next checkpoint", reached)
    except KeyboardInterrupt:
        print("cancelled", file=sys.stderr)
        return 130
    formed = first_formed(checkpoints)
    if formed is None:
        print(f"no head's induction score passed 0.5 in {s.steps} steps")
    else:
        print(f"first head past 0.5, at step {formed.step}: {best_head(formed.induction)}")
        print(f"best head at step {checkpoints[-1].step}: {best_head(checkpoints[-1].induction)}")
    if args.json:
        Path(args.json).write_text(json.dumps([c.to_json() for c in checkpoints]), encoding="utf-8")
        print(f"wrote {args.json}")
    return 0
