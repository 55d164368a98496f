"""A decoder language model one token at a time: a prompt read within the context and the memory
free, next-token predictions, and generation with the KV cache (its size: ``kv_cache``; a decode
step timed: ``decode_timing``; a token's text shown: ``token_text``).

    model = load_model("smollm2", expect=DECODER)
    p = predict(model, "The capital of France is")
    p.logits                         # (V,) next-token logits after the last prompt token
    p.attentions.shape               # (30, 9, T, T) = (layers, query heads, T, T)
    g = Generation.start(model, p)   # prefill: the cache holds T tokens
    g2 = g.append(token_id, prob)    # one decode step: 1 new query against T + 1 keys; g unchanged
    g2.undo() is g                   # back one token, nothing recomputed

torch is imported inside the functions that run the model, loaded by then.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass
from typing import Any

import numpy as np

from core.decoder.run import hooked_run
from core.free_memory import available_memory
from core.interp.token_text import pieces, visible
from core.maths.sampling import Draws, reshape
from core.models.kinds import DECODER, LoadedModel, check_kind

_chosen: list[int | None] = [None]  # the most tokens read, where a person chose fewer than the model's


def set_context_limit(tokens: int | None) -> None:
    """Read at most ``tokens`` of a prompt (the app's setting, a command's --context); None: as many
    as the model's own context holds."""
    if tokens is not None and tokens < 2:
        raise ValueError(f"Read at least 2 tokens of a prompt; got {tokens}.")
    _chosen[0] = tokens


def context_limit(model: LoadedModel) -> int:
    """The most tokens a prompt plus its generated tokens may have here: the model's own context,
    or fewer where a person chose fewer (``set_context_limit``)."""
    return min(model.max_tokens, _chosen[0] or model.max_tokens)


def weights_bytes(model: LoadedModel, tokens: int) -> int:
    """Bytes of every head's weights over ``tokens`` tokens, kept for each run: layers · heads · n²
    float32 numbers (283 MB for SmolLM2 at 512 tokens, 4.5 GB at 2,048)."""
    return model.n_layers * model.n_heads * tokens * tokens * 4


def check_fits(model: LoadedModel, tokens: int) -> None:
    """ValueError, with the numbers, before a run of ``tokens`` tokens whose weights (twice over: a
    run needs room beside what it keeps) do not fit the memory free now."""
    need, free = weights_bytes(model, tokens), available_memory()
    if free is not None and 2 * need > free:
        raise ValueError(
            f"A prompt of {tokens:,} tokens needs about {_size(need)} to keep every head's weights "
            f"({model.n_layers} layers × {model.n_heads} heads × {tokens:,}² numbers), twice that to run, "
            f"and {_size(free)} of memory is free. Shorten the prompt (on the command line, --context N "
            "reads only its first special token and its last tokens)."
        )


@dataclass(frozen=True)
class Prediction:
    """The prompt as the model read it and its next-token logits."""

    ids: tuple[int, ...]  # (T,) token ids of the prompt (the start dropped when too long)
    pieces: tuple[str, ...]  # (T,) each token's text, leading spaces kept
    logits: np.ndarray  # (V,) float64: the scores for the token after the prompt
    attentions: np.ndarray  # (L, H, T, T) float32: every head's weights over the prompt
    dropped: int  # tokens cut from the start because the prompt was longer than the context
    cache: Any = None  # the transformers KV cache after the prompt (None when not kept)


@dataclass(frozen=True)
class Chosen:
    """A token appended by generation and the probability it had when chosen."""

    id: int
    piece: str
    prob: float  # under the settings it was chosen with (after temperature)


def _size(n: int) -> str:
    """Bytes as people read them: "15 MiB", "4.5 GiB"."""
    return f"{n / 2**30:.1f} GiB" if n >= 2**30 else f"{n / 2**20:,.0f} MiB"


def encode(model: LoadedModel, text: str) -> tuple[list[int], int]:
    """Token ids of ``text`` and how many were dropped: past ``context_limit`` the first special
    token (the family's <bos>, where its tokenizer adds one) and the last tokens are kept, the ones
    after the first dropped (``cut_note`` says so). ValueError for an empty text, or one whose run
    does not fit in memory (``check_fits``)."""
    check_kind(model.name, model.kind, DECODER)
    if not (text or "").strip():
        raise ValueError("Type a prompt first: the model continues the text you give it.")
    ids = model.tokenizer(text, add_special_tokens=True)["input_ids"]
    limit = context_limit(model)
    keep = ids
    if len(ids) > limit:
        first = ids[:1] if ids[0] in model.tokenizer.all_special_ids else []
        keep = first + ids[len(ids) - limit + len(first) :]
    check_fits(model, len(keep))
    return keep, len(ids) - len(keep)


def cut_note(model: LoadedModel, ids, dropped: int) -> str:
    """What a cut prompt lost, in one sentence (``ids`` as ``encode`` kept them); "" when whole."""
    if not dropped:
        return ""
    first = int(ids[0]) in model.tokenizer.all_special_ids
    start = 2 if first else 1
    kept = f"the last {len(ids) - (start - 1)} kept"
    if first:
        kept = f"the first ({visible(model.tokenizer.decode([int(ids[0])]))}) and {kept}"
    return (
        f"The prompt is {len(ids) + dropped:,} tokens, more than the {context_limit(model):,} read here: "
        f"tokens {start} to {start + dropped - 1} were dropped, {kept}."
    )


# Characters a token may hold that print as nothing, or as a blank, and the sign shown for each.
def predict(model: LoadedModel, text: str, keep_cache: bool = False) -> Prediction:
    """Run ``model`` once over ``text``: next-token logits and every head's attention weights."""
    ids, dropped = encode(model, text)
    return prefill(model, ids, dropped, keep_cache)


def prefill(model: LoadedModel, ids, dropped: int = 0, keep_cache: bool = True) -> Prediction:
    """Run ``model`` over the token ids ``ids`` (T,) at once, n × n weights per head."""
    ids = [int(i) for i in ids]
    # The last position's logits only: a 262,144-token vocabulary costs T times less.
    out = hooked_run(model, ids, cache=["pattern"], keep_past=keep_cache, last_logits=True)
    attentions = out.stacked("pattern").float().numpy()  # (L, H, T, T)
    logits = out.logits[0, -1].double().numpy()
    return Prediction(tuple(ids), pieces(model, ids), logits, attentions, dropped, out.past)


class _Cache:
    """The KV cache a line of generations shares, with the number of tokens it holds now. Each
    layer's keys and values are (1, kv_heads, tokens, head_dim). Only ``Generation.append`` changes
    it, under the lock: it cuts the cache back to the generation it extends, then adds one token."""

    def __init__(self, cache):
        self.cache = cache
        self.lock = threading.Lock()


@dataclass(frozen=True, eq=False)
class Generation:
    """A prompt and the tokens appended to it, decoded one at a time with the KV cache; never
    changed once made: ``append`` returns the next generation and ``undo`` the one before.

    Generations grown from one prompt share one cache (``_Cache``): a decode step computes one new
    query row (1 × n weights per head) instead of the n × n of the prefill, and going back needs
    no recomputing. What a generation shows (its logits, weights and cache shapes) is its own.
    """

    model: LoadedModel
    prompt: Prediction
    chosen: tuple[Chosen, ...]
    logits: np.ndarray  # (V,) the logits for the next token
    last_attentions: np.ndarray | None  # (L, H, q, n): q = T after the prefill, 1 after a step
    shapes: tuple[tuple[int, ...], ...]  # per layer, the shape of its cached keys (values alike)
    before: Generation | None  # the generation this one appended a token to
    shared: _Cache

    @classmethod
    def start(cls, model: LoadedModel, prompt: Prediction) -> Generation:
        """The prompt alone, prefilled (again, when ``prompt`` kept no cache)."""
        if prompt.cache is None:
            prompt = prefill(model, prompt.ids, prompt.dropped)
        shapes = tuple(tuple(layer.keys.shape) for layer in prompt.cache.layers)
        return cls(model, prompt, (), prompt.logits, prompt.attentions, shapes, None, _Cache(prompt.cache))

    @property
    def ids(self) -> list[int]:
        return [*self.prompt.ids, *(c.id for c in self.chosen)]

    @property
    def length(self) -> int:
        """Tokens in the cache."""
        return len(self.prompt.ids) + len(self.chosen)

    def append(self, token_id: int, prob: float) -> Generation:
        """One decode step: feed ``token_id`` with the cache; the next generation, one token longer."""

        if self.length >= context_limit(self.model):
            raise ValueError(f"The context is full ({context_limit(self.model)} tokens); undo a step first.")
        check_fits(self.model, self.length + 1)
        with self.shared.lock:
            cache = self.shared.cache
            extra = cache.get_seq_length() - self.length  # what later generations of this line added
            if extra:
                cache.crop(-extra)
            out = hooked_run(
                self.model, [int(token_id)], cache=["pattern"], past=cache, grow_past=True, keep_past=True,
                last_logits=True,
            )  # fmt: skip
            self.shared.cache = out.past
            shapes = tuple(tuple(layer.keys.shape) for layer in out.past.layers)
        chosen = Chosen(int(token_id), pieces(self.model, [token_id])[0], float(prob))
        attentions = out.stacked("pattern").float().numpy()
        logits = out.logits[0, -1].double().numpy()
        return Generation(
            self.model, self.prompt, (*self.chosen, chosen), logits, attentions, shapes, self, self.shared
        )

    def undo(self) -> Generation | None:
        """The generation before the last appended token (None when only the prompt is here)."""
        return self.before

    def cache_shapes(self) -> list[tuple[int, ...]]:
        """Per layer, the shape of its cached keys (the values have the same shape)."""
        return list(self.shapes)


def generate(
    model: LoadedModel, text: str, n: int, temperature=1.0, top_k=None, top_p=1.0, seed: int = 0
) -> tuple[Prediction, list[Chosen]]:
    """Append up to ``n`` tokens to ``text``, each drawn with ``seed``'s generator under the
    settings; stops after the model's end-of-text token or when the context is full."""
    if n < 1:
        raise ValueError(f"Generate at least one token (got {n}).")
    reshape(np.zeros(1), temperature, top_k, top_p)  # check the settings before running
    prompt = predict(model, text, keep_cache=True)
    generation = Generation.start(model, prompt)
    draws = Draws(seed)  # seeded once: each token takes the stream's next number
    for _ in range(min(n, context_limit(model) - generation.length)):
        token, prob = draws.draw(reshape(generation.logits, temperature, top_k, top_p))
        generation = generation.append(token, prob)
        if token == model.tokenizer.eos_token_id:
            break
    return prompt, list(generation.chosen)


__all__ = [
    "Chosen", "Generation", "Prediction", "check_fits", "context_limit", "cut_note", "encode", "generate",
    "predict", "prefill", "set_context_limit", "weights_bytes",
]  # fmt: skip
