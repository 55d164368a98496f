"""An encoder (BERT-style: its ``embeddings``, then its ``encoder`` stack) run from what its first
block reads, so that attributions can change that input or take gradients with respect to it.

    e = embed(model, ids)        # (T, hidden): word, position and segment embeddings, normed
    pooled(model, rows)          # rows (B, T, hidden) -> (B, hidden): the last layer's mean
    attention_weights(model, ids)  # (layers, heads, T, T): transformers' own weights

The mean over positions is how sentence-transformers' MiniLM turns a text into one vector.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any


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
