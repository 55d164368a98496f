"""Knock attention heads out of a decoder and run it: the model is never modified.

    with ablated(module, [(5, 2)], mode="zero"):   # layer 6, head 3 (0-based in code)
        logits = module(ids).logits
    # outside the block the model is clean again, also after an error or a cancel

A head's output is what its attention returns before the layer's output projection, shape
(batch, T, heads, head_dim). Zero-ablation sets it to 0; mean-ablation replaces it with the
head's mean output over a reference text (``head_means``). An attention tap
(``core.decoder.hooks``) does the replacing and is removed when the ``with`` block ends,
however it ends.

The first position is left alone unless ``first=True``. Many heads park their attention on the
first token (an attention sink), and what a head writes there is unlike its output anywhere
else; replacing it changes every later position through that sink, so a head can look important
only because the first token was overwritten. The first position is position 0 of the sequence,
also when the model reads one new token at a time with a KV cache. Hooks act only in the
thread that installed them, so a run of the same model in another thread (another step of the
panel, in the worker) sees the intact model.

``module`` is a transformers causal language model of a family ``core.decoder.adapter`` reads.
Layers and heads are 0-based in code and 1-based in messages.
torch is imported inside the functions, so importing this module is cheap.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any

import numpy as np

from core.decoder.adapter import DecoderShape, adapter_of
from core.decoder.hooks import Tap, tapped
from core.decoder.run import hooked_run
from core.maths.attention import softmax

__all__ = [
    "MEAN_REFERENCE", "MODES", "Head", "ablated", "ablated_rows", "as_ids", "check_heads", "head_means",
    "head_outputs", "next_token_probs", "run", "shape_of"
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


def shape_of(module: Any) -> DecoderShape:
    """Layers, query heads, key/value heads and head size of ``module``'s attention; ValueError,
    naming the supported families, for a model the adapters do not read."""
    return adapter_of(module).shape


def check_heads(module: Any, heads: Iterable[Head]) -> tuple[Head, ...]:
    """``heads`` as sorted unique (layer, head) pairs; ValueError naming the first that does not exist."""
    shape = shape_of(module)
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


def as_ids(ids: Sequence[int] | Any) -> Any:
    """Token ids as a (1, T) int64 torch tensor; ValueError when there are none."""
    import torch

    tensor = torch.as_tensor(ids, dtype=torch.long).reshape(1, -1)
    if tensor.shape[1] == 0:
        raise ValueError("Type some text first: the model needs at least one token.")
    return tensor


def run(
    module: Any, ids: Sequence[int] | Any, attentions: bool = False
) -> tuple[np.ndarray, np.ndarray | None]:
    """One forward pass: next-token logits at every position (T, vocab) float32 and, with
    ``attentions``, every head's weights (layers, heads, T, T) float32.

    Hooks installed by ``ablated`` act on it like on any other call of the model.
    """
    import torch

    with torch.inference_mode():
        out = module(input_ids=as_ids(ids), use_cache=False, output_attentions=attentions)
    logits = out.logits[0].float().numpy()
    if not attentions:
        return logits, None
    return logits, torch.stack([a[0] for a in out.attentions]).float().numpy()


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
    module: Any,
    heads: Iterable[Head],
    mode: str = "zero",
    means: np.ndarray | None = None,
    first: bool = False,
) -> Iterator[tuple[Head, ...]]:
    """Run ``module`` with ``heads`` knocked out inside the ``with`` block; yields the checked heads.

    ``mode`` "zero" sets each head's output to 0, "mean" to ``means[layer, head]`` (from
    ``head_means``, shape (layers, heads, head_dim)). The first position keeps its output unless
    ``first``. The hooks are removed on leaving.
    """
    shape = shape_of(module)
    checked = check_heads(module, heads)
    mask = np.zeros((1, shape.layers, shape.heads), dtype=bool)
    for layer, head in checked:
        mask[0, layer, head] = True
    with ablated_rows(module, mask, mode, means, first):
        yield checked


@contextmanager
def ablated_rows(
    module: Any, mask: np.ndarray, mode: str = "zero", means: np.ndarray | None = None, first: bool = False
) -> Iterator[None]:
    """Knock out a different set of heads in each row of a batch (the first position too with ``first``).

    ``mask`` (batch, layers, heads) bool: True where row b has that head knocked out; a batch of
    1 applies to every row. Inputs must then have ``batch`` rows (or any number when it is 1).
    """
    import torch

    shape = shape_of(module)
    mask = np.asarray(mask, dtype=bool)
    if mask.ndim != 3 or mask.shape[1:] != (shape.layers, shape.heads):
        raise ValueError(
            f"The head mask has shape {mask.shape}; it needs (batch, {shape.layers}, {shape.heads})."
        )
    replacement = _replacement(shape, mode, means)
    layers = {int(layer) for layer in np.flatnonzero(mask.any(axis=(0, 2)))}
    rows = torch.from_numpy(mask)[:, :, None, :, None]  # (B, layers, 1, H, 1)
    with tapped(KnockOut(layers, rows, replacement, first)):
        yield


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


class KnockOut(Tap):
    """Replaces the heads where ``rows`` (B, layers, 1, H, 1) is True with ``value`` (layers, H, d),
    except at position 0 of the sequence unless ``first``."""

    def __init__(self, layers: set[int], rows: Any, value: Any, first: bool):
        self.layers, self.rows, self.value, self.first = layers, rows, value, first

    def heads(self, layer, z, weights, value):
        if layer not in self.layers:
            return z
        import torch

        where = self.rows[:, layer]  # (B, 1, H, 1)
        if not self.first:
            t = z.shape[1]
            start = value.shape[2] - t  # the queries are the last t of the keys
            where = where & (torch.arange(start, start + t) != 0)[None, :, None, None]
        return torch.where(where, self.value[layer].to(z.dtype)[None, None], z)


def next_token_probs(module: Any, ids: Sequence[int] | Any) -> np.ndarray:
    """(vocab,) float64: the probability of each token coming next after ``ids``."""
    return softmax(run(module, ids)[0][-1].astype(np.float64))
