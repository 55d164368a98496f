"""``attention-lab models``: list the models Attention Lab knows, or add SmolLM2.

attention-lab models list [--json]
attention-lab models add smollm2      # 93 MB download and a one-off conversion; safe to re-run
"""

from __future__ import annotations

import json
import sys

from app.commands.progress import stage


def add_arguments(parser) -> None:
    from app.main import Parser

    sub = parser.add_subparsers(dest="action", metavar="ACTION", required=True, parser_class=Parser)
    listing = sub.add_parser("list", help="every known model: kind, layers × heads, path, installed")
    listing.add_argument("--json", action="store_true", help="print one JSON document instead of text")
    add = sub.add_parser("add", help="fetch and convert a model once (progress on stderr)")
    add.add_argument("model", choices=["smollm2"], help="the model to add")


def run(args) -> int:
    return list_models(args.json) if args.action == "list" else add_model()


def recent_folders() -> list[str]:
    """Folders opened in the Real model panel, most recent first."""
    from app.settings import settings

    value = settings().value("model/recent", [])
    return [value] if isinstance(value, str) else list(value or [])


def list_models(as_json: bool) -> int:
    from core.catalog import known_models

    entries = known_models(recent_folders())
    if as_json:
        json.dump([e.as_dict() for e in entries], sys.stdout, ensure_ascii=False)
        print()
        return 0
    for e in entries:
        shape = f"{e.layers} layers × {e.heads} heads" if e.layers else "?"
        if e.kv_heads and e.kv_heads != e.heads:
            shape += f" ({e.kv_heads} key/value heads)"
        where = e.path if e.installed else missing(e.key)
        print(f"{e.key:<10} {e.name:<24} {e.kind:<8} {shape:<40} {where}")
    from core import smollm2

    print(f"note: {smollm2.NAME} is {smollm2.ORIGIN}, so its probabilities are not exactly the original's.")
    return 0


def missing(key: str) -> str:
    """What the listing says for a model that is not there: how to add it, or what to install."""
    from core import smollm2
    from core.install_advice import is_standalone

    if key == smollm2.KEY and smollm2.cannot_add() is None:
        return f"not added (attention-lab models add {key})"
    if is_standalone():
        return "not in this build (the full build includes it)"
    return "not installed (pip install 'attention-lab[models]')"


def add_model() -> int:
    from core import smollm2

    shown = set()

    def report(done: int, total: int) -> None:
        if done < total and done not in shown:
            shown.add(done)
            stage(f"[{done + 1}/{total}] {smollm2.STEPS[done]}")

    if smollm2.verified():
        print(f"{smollm2.NAME} is already added.", file=sys.stderr)
    else:
        try:
            smollm2.install(report)
        except KeyboardInterrupt:
            print("attention-lab models: cancelled; nothing was kept.", file=sys.stderr)
            return 130
    print(smollm2.installed_folder())
    return 0
