"""An encoder (BERT-style: its ``embeddings``, then its ``encoder`` stack) run from what its first
block reads, so that attributions can change that input or take gradients with respect to it.

    e = embed(model, ids)        # (T, hidden): word, position and segment embeddings, normed
    pooled(model, rows)          # rows (B, T, hidden) -> (B, hidden): the last layer's mean
    attention_weights(model, ids)  # (layers, heads, T, T): transformers' own weights
    seen, scaling, caps = encoder_heads(model, tokens)  # every head's q, k, v, z, weights, tapped

The mean over positions is how sentence-transformers' MiniLM turns a text into one vector.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from core.decoder.hooks import Tap, tapped


def _parts(module: Any) -> tuple[Any, Any]:
    embeddings, stack = getattr(module, "embeddings", None), getattr(module, "encoder", None)
    if embeddings is None or stack is None:
        raise ValueError(
            f"{type(module).__name__} is not a BERT-style encoder (embeddings, then a stack of blocks); "
            "open the bundled MiniLM."
        )
    return embeddings, stack


def embed(model: Any, ids: Sequence[int]) -> Any:
    """(T, hidden) torch: what the first block reads for ``ids``, (T,) token ids."""
    import torch

    embeddings, _ = _parts(model.module)
    with torch.no_grad():  # not inference mode: gradients are taken at it later
        return embeddings(input_ids=torch.as_tensor([list(ids)]))[0]


def pooled(model: Any, rows: Any) -> Any:
    """(B, hidden) torch: the mean over positions of the last layer's output, the blocks run from
    ``rows`` (B, T, hidden), each a first-block input; gradients flow where ``rows`` has them."""
    _, stack = _parts(model.module)
    return stack(rows).last_hidden_state.mean(1)


def attention_weights(model: Any, ids: Sequence[int]) -> Any:
    """(layers, heads, T, T) numpy float64: every head's weights over ``ids``, one run."""
    import torch

    _parts(model.module)
    with torch.inference_mode():
        out = model.module(input_ids=torch.as_tensor([list(ids)]), output_attentions=True)
    return torch.stack([a[0] for a in out.attentions]).double().numpy()


def encoder_heads(model: Any, tokens: Any) -> tuple[dict, list, list]:
    """One run of ``tokens`` ((1, T) torch ids) with every layer's attention tapped: (site, layer)
    -> the tap's tensor (q, k, v (1, heads, T, d), z (1, T, heads, d), pattern (1, heads, T, T)),
    and each layer's score scaling and soft cap (None: none)."""
    import torch

    from core.decoder.adapter import tap_attention

    module = model.module
    tap_attention(module)
    keep = _Keep()
    with tapped(keep), torch.inference_mode():
        module(input_ids=tokens, attention_mask=torch.ones_like(tokens))
    layers = len(keep.seen) // 5
    scaling = _per_layer(module, layers, "scaling", keep.seen["q", 0].shape[-1] ** -0.5)
    return keep.seen, scaling, _per_layer(module, layers, "attn_logit_softcapping", None)


class _Keep(Tap):
    """An encoder's q, k, v, head outputs and weights (a decoder's come from the hooked run)."""

    def __init__(self):
        self.seen: dict[tuple[str, int], Any] = {}

    def qkv(self, layer, q, k, v):
        self.seen.update({("q", layer): q, ("k", layer): k, ("v", layer): v})
        return q, k, v

    def heads(self, layer, z, weights, value):
        self.seen.update({("z", layer): z, ("pattern", layer): weights})
        return z


def _per_layer(module: Any, layers: int, name: str, default: float | None) -> list:
    """Each of an encoder's attention modules' float attribute ``name`` (found by its
    ``layer_idx``), else ``default``."""
    found = {
        m.layer_idx: float(getattr(m, name))
        for m in module.modules()
        if isinstance(getattr(m, name, None), float) and isinstance(getattr(m, "layer_idx", None), int)
    }
    return [found.get(layer, default) for layer in range(layers)]
