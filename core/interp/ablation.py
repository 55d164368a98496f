"""Knock attention heads out of a decoder and run it: the model is never modified.

    with ablated(model, [(5, 2)], mode="zero"):    # layer 6, head 3 (0-based in code)
        logits = model.module(ids).logits
    # outside the block the model is clean again, also after an error or a cancel
    hooked_run(model, ids, edits=knockout(shape_of(model), mask))   # one set of heads per row

A head's output is what its attention returns before the layer's output projection, shape
(batch, T, heads, head_dim): the hooked run's ``z`` (``core.decoder.run``). Zero-ablation sets
it to 0; mean-ablation replaces it with the head's mean output over a reference text
(``head_means``). ``knockout`` gives the run's edits; ``ablated`` passes them to every run in
its block (a generation with a KV cache too), and they are gone when it ends, however it ends.

The first position is left alone unless ``first=True``. Many heads park their attention on the
first token (an attention sink), and what a head writes there is unlike its output anywhere
else; replacing it changes every later position through that sink, so a head can look important
only because the first token was overwritten. The first position is position 0 of the sequence,
also when the model reads one new token at a time with a KV cache. Hooks act only in the
thread that installed them, so a run of the same model in another thread (another step of the
panel, in the worker) sees the intact model.

``model`` is a LoadedModel decoder of a family ``core.decoder.adapter`` reads.
Layers and heads are 0-based in code and 1-based in messages.
torch is imported inside the functions, so importing this module is cheap.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any

import numpy as np

from core.decoder.adapter import DecoderShape, adapter_of
from core.decoder.run import Edit, editing, hooked_run
from core.maths.attention import softmax

__all__ = [
    "MEAN_REFERENCE", "MODES", "Head", "ablated", "check_heads", "head_means", "head_outputs", "knockout",
    "next_token_probs", "run", "shape_of"
]  # fmt: skip

MODES = ("zero", "mean")
# Plain text over which mean-ablation averages each head's output: varied words and punctuation.
MEAN_REFERENCE = (
    "On Monday the bakery on the corner opened late, so Tom bought bread at the market instead. "
    "It rained all afternoon; the children stayed inside, read two books and built a tower of "
    "blocks. In 1969 people first walked on the Moon, and many still remember where they were. "
    "Water boils at 100 degrees, but on a high mountain it boils sooner."
)
Head = tuple[int, int]  # (layer, head), 0-based


def shape_of(model: Any) -> DecoderShape:
    """Layers, query heads, key/value heads and head size of ``model``'s attention; ValueError,
    naming the supported families, for a model the adapters do not read."""
    return adapter_of(model.module).shape


def check_heads(model: Any, heads: Iterable[Head]) -> tuple[Head, ...]:
    """``heads`` as sorted unique (layer, head) pairs; ValueError naming the first that does not exist."""
    shape = shape_of(model)
    checked = set()
    for layer, head in heads:
        if not 0 <= layer < shape.layers:
            raise ValueError(f"Layer {layer + 1} does not exist: this model has layers 1–{shape.layers}.")
        if not 0 <= head < shape.heads:
            raise ValueError(
                f"Head {head + 1} of layer {layer + 1} does not exist: each layer has heads 1–{shape.heads}."
            )
        checked.add((int(layer), int(head)))
    return tuple(sorted(checked))


def run(
    model: Any, ids: Sequence[int] | Any, attentions: bool = False
) -> tuple[np.ndarray, np.ndarray | None]:
    """One hooked run: next-token logits at every position (T, vocab) float32 and, with
    ``attentions``, every head's weights (layers, heads, T, T) float32. ValueError for no tokens.

    The edits of an ``ablated`` block act on it like on any other run of the model.
    """
    import torch

    if len(ids) == 0:
        raise ValueError("Type some text first: the model needs at least one token.")
    out = hooked_run(model, ids, cache=["pattern"] if attentions else [])
    logits = out.logits[0].float().numpy()
    if not attentions:
        return logits, None
    return logits, torch.stack([out.cache["pattern", n][0] for n in range(model.n_layers)]).float().numpy()


def head_outputs(model: Any, ids: Sequence[int] | Any) -> np.ndarray:
    """Every head's output at every position, (layers, T, heads, head_dim) float32: the ``z`` of
    one hooked run of ``model`` (a LoadedModel decoder)."""
    import torch

    out = hooked_run(model, ids, cache=["z"], unembed=False)
    return torch.stack([out.cache["z", layer][0] for layer in range(model.n_layers)]).float().numpy()


def head_means(model: Any, ids: Sequence[int] | Any) -> np.ndarray:
    """Each head's mean output over the positions of a reference text: (layers, heads, head_dim)."""
    return head_outputs(model, ids).mean(axis=1)


@contextmanager
def ablated(
    model: Any,
    heads: Iterable[Head],
    mode: str = "zero",
    means: np.ndarray | None = None,
    first: bool = False,
) -> Iterator[tuple[Head, ...]]:
    """Run ``model`` with ``heads`` knocked out inside the ``with`` block; yields the checked heads.

    ``mode`` "zero" sets each head's output to 0, "mean" to ``means[layer, head]`` (from
    ``head_means``, shape (layers, heads, head_dim)). The first position keeps its output unless
    ``first``. The edits are gone on leaving.
    """
    shape = shape_of(model)
    checked = check_heads(model, heads)
    mask = np.zeros((1, shape.layers, shape.heads), dtype=bool)
    for layer, head in checked:
        mask[0, layer, head] = True
    with editing(model, knockout(shape, mask, mode, means, first)):
        yield checked


def knockout(
    shape: DecoderShape,
    mask: np.ndarray,
    mode: str = "zero",
    means: np.ndarray | None = None,
    first: bool = False,
) -> list[Edit]:
    """The edits that knock out a different set of heads in each batch row (the first position too
    with ``first``): ``mask`` (batch, layers, heads) bool, True where row b has that head knocked
    out; a batch of 1 applies to every row."""
    import torch

    mask = np.asarray(mask, dtype=bool)
    if mask.ndim != 3 or mask.shape[1:] != (shape.layers, shape.heads):
        raise ValueError(
            f"The head mask has shape {mask.shape}; it needs (batch, {shape.layers}, {shape.heads})."
        )
    replacement = _replacement(shape, mode, means)
    rows = torch.from_numpy(mask)[:, :, None, :, None]  # (B, layers, 1, H, 1)
    positions = None if first else slice(1, None)
    return [
        Edit("z", layer, "replace", replacement[layer], positions=positions, where=rows[:, layer])
        for layer in np.flatnonzero(mask.any(axis=(0, 2))).tolist()
    ]


def _replacement(shape: DecoderShape, mode: str, means: np.ndarray | None) -> Any:
    """(layers, heads, head_dim) torch tensor that replaces a knocked-out head's output."""
    import torch

    if mode not in MODES:
        raise ValueError(f"Unknown ablation '{mode}'; choose {' or '.join(MODES)}.")
    if mode == "zero":
        return torch.zeros(shape.layers, shape.heads, shape.head_dim)
    expected = (shape.layers, shape.heads, shape.head_dim)
    if means is None or np.shape(means) != expected:
        raise ValueError(
            f"Mean-ablation needs every head's mean output, shape {expected}; "
            "compute it with head_means() on a reference text."
        )
    return torch.as_tensor(np.asarray(means), dtype=torch.float32)


def next_token_probs(model: Any, ids: Sequence[int] | Any) -> np.ndarray:
    """(vocab,) float64: the probability of each token coming next after ``ids`` (the unembedding
    applied at the last position only)."""
    import torch

    normed = hooked_run(model, ids, unembed=False).normed[:, -1]
    with torch.inference_mode():
        logits = adapter_of(model.module).logits_of(normed)[0]
    return softmax(logits.double().numpy())
