"""``attention-lab predict``: a decoder language model's next-token probabilities, and generation.

    attention-lab predict --text "The capital of France is" --top 3
    tokens (5): The|␣capital|␣of|␣France|␣is
    next token (temperature 1, entropy 1.33 nats):
      ␣Paris   77.3%
      ␣the      6.5%
      ␣London   1.2%
      (rest)   15.0%

Probabilities are after the temperature; tokens that top-k or top-p cut are marked.
"""

from __future__ import annotations

import json
import sys

NAME = "predict"
HELP = "run a decoder language model (SmolLM2 by default) on a prompt: next-token probabilities, generation"
SPACE = "␣"


def add_arguments(parser) -> None:
    parser.add_argument("--text", required=True, help="the prompt to continue")
    parser.add_argument(
        "--model",
        default="smollm2",
        metavar="smollm2|PATH",
        help="'smollm2' (once added) or a decoder folder",
    )
    parser.add_argument("--top", type=int, default=10, metavar="K", help="how many candidates to list")
    parser.add_argument(
        "--temperature", type=float, default=1.0, metavar="T", help="above 0; near 0 = greedy"
    )
    parser.add_argument(
        "--top-p", type=float, default=1.0, metavar="P", help="keep the smallest set reaching P"
    )
    parser.add_argument("--top-k", type=int, metavar="K", help="keep only the K most probable tokens")
    parser.add_argument(
        "--seed", type=int, default=0, metavar="S", help="seed of the sampling (with --generate)"
    )
    parser.add_argument("--generate", type=int, metavar="N", help="append N sampled tokens, one at a time")
    parser.add_argument("--json", action="store_true", help="print one JSON document instead of text")


def visible(piece: str) -> str:
    """A token's text with its spaces and line breaks made visible."""
    return piece.replace(" ", SPACE).replace("\n", "↵")


def run(args) -> int:
    from core import decoder, models, sampling

    if not args.text.strip():
        raise ValueError("--text is empty; give a prompt for the model to continue")
    if args.top < 1:
        raise ValueError(f"--top must be at least 1 (got {args.top})")
    if args.generate is not None and args.generate < 1:
        raise ValueError(f"--generate must be at least 1 (got {args.generate})")
    if args.seed < 0:
        raise ValueError(f"--seed must be 0 or more (got {args.seed})")
    if not args.model:
        raise ValueError("--model is empty; give 'smollm2' or a model folder")
    settings = sampling.Settings(args.temperature, args.top_k, args.top_p).check()
    try:
        model = models.load_model(args.model, expect=models.DECODER)
    except models.ModelsExtraMissing as exc:
        raise ValueError(str(exc)) from exc
    if args.generate:
        prompt, generated = decoder.generate(
            model, args.text, args.generate, settings.temperature, settings.top_k, settings.top_p, args.seed
        )
    else:
        prompt, generated = decoder.predict(model, args.text), []
    dist = sampling.reshape(prompt.logits, settings.temperature, settings.top_k, settings.top_p)
    choices, rest = sampling.top(dist, args.top)
    piece = model.tokenizer.decode

    if args.json:
        doc = {
            "model": model.name,
            "tokens": list(prompt.pieces),
            "dropped_tokens": prompt.dropped,
            "settings": {
                "temperature": settings.temperature,
                "top_k": settings.top_k,
                "top_p": settings.top_p,
            },
            "entropy": round(dist.entropy, 6),
            "top": [
                {"token": piece([c.id]), "id": c.id, "prob": round(c.prob, 6), "kept": c.kept}
                for c in choices
            ],
            "rest": round(rest, 6),
        }
        if generated:
            doc["seed"] = args.seed
            doc["generated"] = [{"token": g.piece, "id": g.id, "prob": round(g.prob, 6)} for g in generated]
        json.dump(doc, sys.stdout, ensure_ascii=False)
        print()
        return 0

    kv = f", {model.n_kv_heads} key/value heads" if model.n_kv_heads != model.n_heads else ""
    print(f"model: {model.name} (decoder, {model.n_layers} layers × {model.n_heads} heads{kv})")
    print(f"tokens ({len(prompt.ids)}): {'|'.join(visible(p) for p in prompt.pieces)}")
    if prompt.dropped:
        print(f"note: the prompt was cut to its last {len(prompt.ids)} tokens; {prompt.dropped} were dropped")
    cuts = [f"top-k {settings.top_k}"] * (settings.top_k is not None) + [f"top-p {settings.top_p:g}"] * (
        settings.top_p < 1
    )
    print(f"next token (temperature {settings.temperature:g}{''.join(', ' + c for c in cuts)}, "
          f"entropy {dist.entropy:.2f} nats):")  # fmt: skip
    labels = [visible(piece([c.id])) for c in choices]
    width = max(len(label) for label in [*labels, "(rest)"])
    for label, c in zip(labels, choices, strict=True):
        print(f"  {label:<{width}} {c.prob:7.1%}" + ("" if c.kept else "  (cut)"))
    print(f"  {'(rest)':<{width}} {rest:7.1%}")
    if generated:
        steps = " ".join(f"{visible(g.piece)}({g.prob:.0%})" for g in generated)
        print(f"generated (seed {args.seed}): {steps}")
        print(f"text: {piece([*prompt.ids, *(g.id for g in generated)])}")
    return 0
