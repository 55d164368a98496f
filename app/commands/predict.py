"""``attention-lab predict``: a decoder language model's next-token probabilities, and generation.

    attention-lab predict --text "The capital of France is" --top 3
    tokens (5): The|␣capital|␣of|␣France|␣is
    next token (temperature 1, entropy 1.48 nats):
      ␣Paris   77.3%
      ␣the      6.5%
      ␣London   1.2%
      (rest)   15.0%

Probabilities are after the temperature; tokens that top-k or top-p cut are marked.

    attention-lab predict --text "When Mary and John went to the store, John gave a drink to" \
        --ablate 24.4 --target Mary --foil John --logit-lens

knocks out layer 24, head 4 (counted from 1) and reports the target's probability and its logit
difference against the foil, with every head and without the knocked-out ones, and the
prediction read after every layer (the logit lens). The heads keep their output at the first
token unless --ablate-first is given: many heads use that token as an attention sink, and
overwriting it there can make a head look important for reasons that have nothing to do with
the sentence.
"""

from __future__ import annotations

import json
import sys

from app.commands.arguments import context_flag, count, number, seed
from app.commands.heads import echoed
from app.commands.progress import load_model, loading, stage
from core.decoder.sites import tl_row

MAX_LISTED = 1000
MAX_TEMPERATURE = 100.0
MAX_GENERATED = 512  # new tokens in one command: each keeps every head's weights over all before it
MODES = ("zero", "mean")  # core.interp.ablation.MODES, without importing NumPy to build the parser


def add_arguments(parser) -> None:
    parser.add_argument(
        "--text",
        required=True,
        help="the prompt to continue, read up to the model's context (or --context N) where memory allows; "
        "a longer one keeps its first special token and its last tokens, and says so",
    )
    parser.add_argument(
        "--model",
        default="smollm2",
        metavar="smollm2|PATH|ID",
        help="'smollm2' (once added), a decoder folder, or a model id in the local Hugging Face cache "
        "(gpt2, EleutherAI/pythia-70m; attention-lab models list shows them)",
    )
    context_flag(parser)
    parser.add_argument(
        "--top", type=count("--top", MAX_LISTED), default=10, metavar="K", help="how many candidates to list"
    )
    parser.add_argument(
        "--temperature",
        type=number("--temperature", 0.0, MAX_TEMPERATURE),
        default=1.0,
        metavar="T",
        help="above 0; near 0 = greedy",
    )
    parser.add_argument(
        "--top-p",
        type=number("--top-p", 0.0, 1.0),
        default=1.0,
        metavar="P",
        help="keep the smallest set reaching P",
    )
    parser.add_argument(
        "--top-k", type=count("--top-k", 1_000_000), metavar="K", help="keep only the K most probable tokens"
    )
    parser.add_argument(
        "--seed", type=seed("--seed"), default=0, metavar="S", help="seed of the sampling (with --generate)"
    )
    parser.add_argument(
        "--generate",
        type=count("--generate", MAX_GENERATED),
        metavar="N",
        help="append N sampled tokens, one at a time",
    )
    parser.add_argument(
        "--ablate",
        nargs="+",
        metavar="L.H",
        help="knock out these heads, layer.head counted from 1 (e.g. 24.4)",
    )
    parser.add_argument(
        "--ablation",
        choices=MODES,
        help="with --ablate: zero (default) sets a head's output to 0, mean to its mean on a reference text",
    )
    parser.add_argument(
        "--ablate-first",
        action="store_true",
        help="with --ablate: knock the heads out at the first token too (left alone by default: "
        "it is the attention sink)",
    )
    parser.add_argument("--target", metavar="TOKEN", help="report this token's probability (one token)")
    parser.add_argument("--foil", metavar="TOKEN", help="with --target: the logit difference target − foil")
    parser.add_argument(
        "--direct",
        action="store_true",
        help="with --target and --foil: each head's, MLP's and the embeddings' direct share of the "
        "logit difference (final norm's scale frozen)",
    )
    parser.add_argument("--logit-lens", action="store_true", help="the top next token read after every layer")
    parser.add_argument("--json", action="store_true", help="print one JSON document instead of text")


def parse_head(text: str) -> tuple[int, int]:
    """'24.4' → (23, 3): layer and head counted from 1 on the command line, from 0 in code."""
    layer, dot, head = text.strip().partition(".")
    if not (dot and layer.isdigit() and head.isdigit()):
        raise ValueError(f"--ablate: '{text}' is not layer.head; write e.g. 24.4 (both counted from 1)")
    return int(layer) - 1, int(head) - 1


def run(args) -> int:
    if not args.text.strip():
        raise ValueError("--text is empty; give a prompt for the model to continue")
    if not args.model:
        raise ValueError("--model is empty; give 'smollm2' or a model folder")
    loading(args.model)  # before the imports, which take a while
    from core import models
    from core.interp import prediction, token_text
    from core.maths import sampling

    settings = sampling.Settings(args.temperature, args.top_k, args.top_p).check()
    heads = [parse_head(text) for text in args.ablate or ()]
    if args.ablation and not heads:
        raise ValueError("--ablation needs --ablate: name the heads to knock out, e.g. --ablate 24.4")
    if args.ablate_first and not heads:
        raise ValueError("--ablate-first needs --ablate: name the heads to knock out, e.g. --ablate 24.4")
    if args.foil is not None and args.target is None:
        raise ValueError("--foil needs --target: the logit difference compares the two")
    if args.direct and args.foil is None:
        raise ValueError("--direct needs --target and --foil: the shares split their logit difference")
    model = load_model(args.model, models.DECODER, said=True)
    stage(f"running {model.name}" + (f", generating {args.generate} tokens" if args.generate else ""))
    readout = DecoderReadout(
        model, args.text, heads, args.ablation or "zero", args.target, args.foil, first=args.ablate_first
    )
    with readout.knocked_out():
        if args.generate:
            prompt, generated = prediction.generate(
                model,
                args.text,
                args.generate,
                settings.temperature,
                settings.top_k,
                settings.top_p,
                args.seed,
            )
        else:
            prompt, generated = prediction.predict(model, args.text), []
        lens = readout.lens(prompt.ids) if args.logit_lens else None
        if args.direct:
            readout.measure_direct(prompt.ids)
    dist = sampling.reshape(prompt.logits, settings.temperature, settings.top_k, settings.top_p)
    choices, rest = sampling.top(dist, args.top)
    piece = model.tokenizer.decode

    if args.json:
        doc = {
            "model": model.name,
            "tokens": list(prompt.pieces),
            "dropped_tokens": prompt.dropped,
            "context_limit": prediction.context_limit(model),
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
        doc.update(readout.document(prompt.logits, lens))
        if prompt.dropped:  # what the cut lost, before what the readout says
            doc["notes"] = [prediction.cut_note(model, prompt.ids, prompt.dropped), *doc.get("notes", ())]
        json.dump(doc, sys.stdout, ensure_ascii=False)
        print()
        return 0

    from core.printing import counted

    kv = f", {counted(model.n_kv_heads, 'key/value head')}" if model.n_kv_heads != model.n_heads else ""
    print(f"model: {model.name} (decoder, {model.n_layers} layers × {model.n_heads} heads{kv})")
    print(context_line(model, prediction.context_limit(model)))
    print(f"tokens ({len(prompt.ids)}): {echoed([token_text.visible(p) for p in prompt.pieces], '|')}")
    if prompt.dropped:
        print(f"note: {prediction.cut_note(model, prompt.ids, prompt.dropped)}")
    cuts = [f"top-k {settings.top_k}"] * (settings.top_k is not None) + [f"top-p {settings.top_p:g}"] * (
        settings.top_p < 1
    )
    print(f"next token (temperature {settings.temperature:g}{''.join(', ' + c for c in cuts)}, "
          f"entropy {dist.entropy:.2f} nats):")  # fmt: skip
    labels = [token_text.visible(piece([c.id])) for c in choices]
    width = max(len(label) for label in [*labels, "(rest)"])
    for label, c in zip(labels, choices, strict=True):
        print(f"  {label:<{width}} {c.prob:7.1%}" + ("" if c.kept else "  (cut)"))
    print(f"  {'(rest)':<{width}} {rest:7.1%}")
    if generated:
        steps = " ".join(f"{token_text.visible(g.piece)}({g.prob:.0%})" for g in generated)
        print(f"generated (seed {args.seed}): {steps}")
        print(f"text: {piece([*prompt.ids, *(g.id for g in generated)])}")
    for line in readout.lines(prompt.logits, lens):
        print(line)
    return 0


def context_line(model, limit: int) -> str:
    """How many tokens of a prompt this command reads: the model's context, or fewer (--context)."""
    if limit >= model.max_tokens:
        return f"context: up to {limit} tokens (the model's own)"
    return f"context: up to {limit} tokens here (--context), of the model's {model.max_tokens}"


class DecoderReadout:
    """What --ablate, --target, --foil and --logit-lens add to a prediction (no-ops without them)."""

    def __init__(
        self, model, text: str, heads, mode: str, target: str | None, foil: str | None, first: bool = False
    ):
        from core.interp.ablation import check_heads
        from core.interp.ranking import answer_token, check_pair

        self.model, self.mode, self.first = model, mode, first  # first: the first token too
        self.heads = check_heads(model, heads) if heads else ()
        self.target = answer_token(model.tokenizer, target, text, "--target") if target is not None else None
        self.foil = answer_token(model.tokenizer, foil, text, "--foil") if foil is not None else None
        if self.target is not None and self.foil is not None:
            check_pair(self.target, self.foil)
        self.means = None
        if self.heads and mode == "mean":
            from core.interp.analysis import analysis_of

            self.means = analysis_of(model).means()
        self.shares = None  # core.interp.head.DirectShares, with --direct
        self.clean = None  # next-token logits with every head, when heads are knocked out
        if self.heads and self.target is not None:
            from core.interp import prediction

            self.clean = prediction.predict(model, text).logits

    def knocked_out(self):
        """A context in which the model runs without the heads (none: the model as it is)."""
        from core.interp.ablation import ablated

        return ablated(self.model, self.heads, self.mode, self.means, self.first)

    def lens(self, ids):
        from core.interp.lens import logit_lens

        return logit_lens(self.model, ids, None if self.target is None else self.target.id)

    def measure_direct(self, ids) -> None:
        """Every part's direct share of logit(target) − logit(foil), as the model runs now."""
        from core.interp.head import direct_shares, record

        self.shares = direct_shares(record(self.model, ids), self.target.id, self.foil.id)

    def _measure(self, logits) -> tuple[float, float | None]:
        """(the target's probability, its logit difference against the foil or None)."""
        from core.maths.attention import softmax

        prob = float(softmax(logits)[self.target.id])
        diff = None if self.foil is None else float(logits[self.target.id] - logits[self.foil.id])
        return prob, diff

    def document(self, logits, lens) -> dict:
        """The JSON fields: ablated, target, logit_lens, notes."""
        doc = {}
        if self.heads:
            doc["ablated"] = [
                {"layer": layer + 1, "head": head + 1, "tl": tl_row("z", layer, head)}
                for layer, head in self.heads
            ]
            doc["ablation"] = self.mode
            doc["ablate_first"] = self.first
        if self.target is not None:
            prob, diff = self._measure(logits)
            target = {"token": self.target.text, "id": self.target.id, "prob": round(prob, 6)}
            if self.foil is not None:
                target |= {"foil": self.foil.text, "foil_id": self.foil.id, "logit_diff": round(diff, 6)}
            if self.clean is not None:
                clean_prob, clean_diff = self._measure(self.clean)
                target["clean_prob"] = round(clean_prob, 6)
                if clean_diff is not None:
                    target["clean_logit_diff"] = round(clean_diff, 6)
            doc["target"] = target
        if self.shares is not None:
            named = zip(self.shares.names, self.shares.values, strict=True)
            doc["direct"] = [{"part": name, "value": round(float(v), 6)} for name, v in named]
            doc["direct_sum"] = round(float(self.shares.values.sum()), 6)
            doc["logit_difference"] = round(self.shares.logit_difference, 6)
        if lens is not None:
            doc["logit_lens"] = [self._lens_row(lens, layer) for layer in range(len(lens.top_ids))]
        if self.shares is not None and self.shares.note:  # Gemma 2 caps the logits after the sum
            doc["notes"] = [self.shares.note]
        return doc

    def _lens_row(self, lens, layer: int) -> dict:
        token = int(lens.top_ids[layer, -1])
        row = {
            "layer": layer + 1,
            "tl": tl_row("resid_post", layer),
            "token": self.model.tokenizer.decode([token]),
            "id": token,
            "prob": round(float(lens.top_probs[layer, -1]), 6),
        }
        if lens.target_rank is not None:
            row["target_rank"] = int(lens.target_rank[layer])
        return row

    def lines(self, logits, lens) -> list[str]:
        """The same as plain text."""
        from core.interp.token_text import visible

        out = [f"note: {self.shares.note}"] if self.shares is not None and self.shares.note else []
        if self.heads:
            named = " ".join(f"{layer + 1}.{head + 1}" for layer, head in self.heads)
            where = ", first token too" if self.first else ", first token left alone"
            out.append(f"knocked out ({self.mode}{where}): {named}")
        if self.target is not None:
            prob, diff = self._measure(logits)
            clean = self._measure(self.clean) if self.clean is not None else None
            line = f"target {visible(self.target.text)}: p = {prob:.4f}"
            line += f" (every head: {clean[0]:.4f})" if clean else ""
            if diff is not None:
                line += (
                    f"; logit difference {visible(self.target.text)} − {visible(self.foil.text)}: {diff:.3f}"
                )
                line += f" (every head: {clean[1]:.3f})" if clean else ""
            out.append(line)
        if self.shares is not None:
            s = self.shares
            ranked = sorted(zip(s.names, s.values, strict=True), key=lambda p: -abs(p[1]))[:8]
            out.append(
                f"direct shares (final norm frozen), sum {s.values.sum():.3f} = logit difference "
                f"{s.logit_difference:.3f}: " + ", ".join(f"{name} {v:+.3f}" for name, v in ranked)
            )
        if lens is not None:
            out.append("logit lens (the top next token read after each layer):")
            for layer in range(len(lens.top_ids)):
                row = self._lens_row(lens, layer)
                rank = f"   target rank {row['target_rank']}" if "target_rank" in row else ""
                out.append(f"  layer {layer + 1:>3}: {visible(row['token']):<12} {row['prob']:6.1%}{rank}")
        return out
