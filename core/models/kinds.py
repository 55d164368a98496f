"""The two kinds of model (an encoder reads a text whole; a decoder predicts the next token) and
``LoadedModel``, what a loaded model is: all the analyses need of ``core.models``, with no import
of torch, transformers or the loading machinery."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from core.printing import counted

ENCODER, DECODER = "encoder", "decoder"


def check_kind(name: str, kind: str, expect: str) -> None:
    """Refuse a model of the wrong kind with a message that says what to choose instead."""
    if kind == expect:
        return
    if expect == DECODER:
        raise ValueError(
            f"{name} is an encoder: it has no language-model head, so it cannot predict the next "
            "token. Choose a decoder such as SmolLM2 (attention-lab models add smollm2)."
        )
    raise ValueError(
        f"{name} is a decoder (a causal language model); this needs an encoder such as the bundled MiniLM."
    )


@dataclass(frozen=True)
class LoadedModel:
    """A model ready for ``run``: the torch module, its tokenizer and what we learnt about it."""

    module: Any  # transformers PreTrainedModel, in eval mode, eager attention
    tokenizer: Any  # transformers tokenizer (a fast one)
    name: str
    source: str  # "minilm" or the folder path
    n_layers: int
    n_heads: int
    max_tokens: int
    is_causal: bool  # measured: no head of a probe run gave weight to a later token
    kind: str = ENCODER  # DECODER: a causal language model with its next-token head
    n_kv_heads: int = 0  # key/value heads per layer (fewer than n_heads: grouped-query attention)
    head_dim: int = 0
    family: str = ""  # a decoder's family ("Llama", "GPT-2"…)
    matches: float | None = None  # a decoder: largest logit difference from transformers' own run
    window: int | None = None  # a sliding window's width, where some layers use one
    sliding: tuple[int, ...] = ()  # the 0-based layers that attend through it
    origin: str = ""  # where a model this app added came from (shown by describe)

    def describe(self) -> str:
        """One line: name, size, grouped keys, family and kind, context, origin, and how closely
        the adapter matches transformers (the model rows and the CLI show it)."""
        shared = self.n_kv_heads not in (0, self.n_heads)
        kv = f" sharing {counted(self.n_kv_heads, 'key/value head')}" if shared else ""
        kind = "decoder: looks back only" if self.is_causal else "encoder: looks both ways"
        parts = [
            f"{self.name}: {self.n_layers} layers × {self.n_heads} heads{kv}",
            f"{self.family} {kind}" if self.family else kind,
            f"up to {self.max_tokens} tokens",
        ]
        if self.origin:
            parts.append(self.origin)
        if self.matches is not None:
            close = f"to {self.matches:.0e}" if self.matches else "exactly"
            parts.append(f"matches transformers {close}")
        return " · ".join(parts)
