"""Knock attention heads out of a Llama-style decoder and run it: the model is never modified.

    with ablated(module, [(5, 2)], mode="zero"):   # layer 6, head 3 (0-based in code)
        logits = module(ids).logits
    # outside the block the model is clean again, also after an error or a cancel

A head's output is its slice of the input of the layer's output projection (``o_proj``), shape
(batch, T, heads · head_dim). Zero-ablation sets the slice to 0; mean-ablation replaces it with
the head's mean output over a reference text (``head_means``). Forward pre-hooks do the
replacing and are removed when the ``with`` block ends, however it ends.

The first position is left alone unless ``first=True``. Many heads park their attention on the
first token (an attention sink), and what a head writes there is unlike its output anywhere
else; replacing it changes every later position through that sink, so a head can look important
only because the first token was overwritten. The first position is position 0 of the sequence,
also when the model reads one new token at a time with a KV cache. Hooks act only in the
thread that installed them, so a run of the same model in another thread (another step of the
panel, in the worker) sees the intact model.

``module`` is a transformers ``LlamaForCausalLM`` (or a model laid out the same way:
``module.model.layers[l].self_attn.o_proj``, ``module.model.norm``, ``module.lm_head``) loaded
with eager attention. Layers and heads are 0-based in code and 1-based in messages.
torch is imported inside the functions, so importing this module is cheap.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import numpy as np

from core.attention import softmax

MODES = ("zero", "mean")
# Plain text over which mean-ablation averages each head's output: varied words and punctuation.
MEAN_REFERENCE = (
    "On Monday the bakery on the corner opened late, so Tom bought bread at the market instead. "
    "It rained all afternoon; the children stayed inside, read two books and built a tower of "
    "blocks. In 1969 people first walked on the Moon, and many still remember where they were. "
    "Water boils at 100 degrees, but on a high mountain it boils sooner."
)
Head = tuple[int, int]  # (layer, head), 0-based


@dataclass(frozen=True)
class DecoderShape:
    """What the hooks need to know about a decoder's attention."""

    layers: int
    heads: int  # query heads per layer
    kv_heads: int  # key/value heads per layer (fewer than ``heads``: grouped-query attention)
    head_dim: int


def shape_of(module: Any) -> DecoderShape:
    """Layers, query heads, key/value heads and head size of ``module``'s attention.

    ValueError when ``module`` is not laid out as a Llama-style decoder with a language-model head.
    """
    try:
        module.lm_head.weight, module.model.norm, module.model.layers[0].self_attn.o_proj
    except (AttributeError, IndexError, TypeError) as exc:
        raise ValueError(
            f"This needs a Llama-style decoder with a language-model head, such as SmolLM2; "
            f"{type(module).__name__} is not one."
        ) from exc
    config = module.config
    heads = config.num_attention_heads
    head_dim = getattr(config, "head_dim", None) or config.hidden_size // heads
    kv = getattr(config, "num_key_value_heads", None) or heads
    return DecoderShape(config.num_hidden_layers, heads, kv, head_dim)


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


def this_thread_only(hook: Callable) -> Callable:
    """``hook`` acting only in the thread that calls this; elsewhere it leaves the call alone."""
    owner = threading.get_ident()

    def guarded(*args, **kwargs):
        return hook(*args, **kwargs) if threading.get_ident() == owner else None

    return guarded


@contextmanager
def recording(parts: Sequence[Any], inputs: bool = False) -> Iterator[dict[int, Any]]:
    """Inside the block, each forward pass in this thread keeps what each of ``parts``
    (sub-modules) returned, or with ``inputs`` what it received (its first argument): the
    yielded dict maps a part's index to its (T, width) torch tensor of the first batch row.
    The hooks are removed when the block ends, however it ends.
    """
    seen: dict[int, Any] = {}

    def keep(index: int):
        def read_input(_, args):
            seen[index] = args[0][0]

        def read_output(_, __, output):
            seen[index] = (output[0] if isinstance(output, tuple) else output)[0]

        return this_thread_only(read_input if inputs else read_output)

    handles = [
        part.register_forward_pre_hook(keep(i)) if inputs else part.register_forward_hook(keep(i))
        for i, part in enumerate(parts)
    ]
    try:
        yield seen
    finally:
        for handle in handles:
            handle.remove()


def stacked(seen: dict[int, Any]) -> Any:
    """What ``recording`` kept, in the order of its parts: (parts, T, width) torch."""
    import torch

    return torch.stack([seen[i] for i in range(len(seen))])


def recorded(module: Any, ids: Sequence[int] | Any, parts: Sequence[Any], inputs: bool = False) -> Any:
    """One forward pass of ``ids``; what each of ``parts`` (sub-modules) returned, or with
    ``inputs`` what it received (its first argument), stacked: (len(parts), T, width) torch.
    """
    import torch

    with recording(parts, inputs) as seen, torch.inference_mode():
        module.model(input_ids=as_ids(ids), use_cache=False)
    return stacked(seen)


def head_outputs(module: Any, ids: Sequence[int] | Any) -> np.ndarray:
    """Every head's output at every position: (layers, T, heads, head_dim) float32.

    Read from the input of each layer's ``o_proj`` during one forward pass.
    """
    shape = shape_of(module)
    projections = [layer.self_attn.o_proj for layer in module.model.layers]
    x = recorded(module, ids, projections, inputs=True).float()
    return x.reshape(shape.layers, -1, shape.heads, shape.head_dim).numpy()


def head_means(module: Any, ids: Sequence[int] | Any) -> np.ndarray:
    """Each head's mean output over the positions of a reference text: (layers, heads, head_dim)."""
    return head_outputs(module, ids).mean(axis=1)


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
    positions: dict[str, Any] = {}  # "ids": (1 or B, T) position of each token in the current pass
    handles = []
    try:
        if not first:
            handles.append(
                module.model.register_forward_pre_hook(
                    this_thread_only(_read_positions(positions)), with_kwargs=True
                )
            )
        for layer in np.flatnonzero(mask.any(axis=(0, 2))):
            rows = torch.from_numpy(mask[:, layer, :])[:, None, :, None]  # (B, 1, H, 1)
            hook = _knock_out(rows, replacement[layer], shape, None if first else positions)
            o_proj = module.model.layers[int(layer)].self_attn.o_proj
            handles.append(o_proj.register_forward_pre_hook(hook))
        yield
    finally:
        for handle in handles:
            handle.remove()


def _read_positions(positions: dict[str, Any]) -> Callable:
    """Pre-hook for the decoder body: keep the position of each token of this pass in
    ``positions["ids"]`` (from ``position_ids``, else counted on from the KV cache's length)."""
    import torch

    def hook(_, args, kwargs):
        ids = kwargs.get("input_ids", args[0] if args else None)
        if ids is None:
            ids = kwargs["inputs_embeds"][..., 0]
        given = kwargs.get("position_ids")
        if given is None:
            cache = kwargs.get("cache", kwargs.get("past_key_values"))
            start = cache.get_seq_length() if cache is not None else 0
            given = torch.arange(ids.shape[1])[None] + start
        positions["ids"] = given

    return hook


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


def _knock_out(rows: Any, value: Any, shape: DecoderShape, positions: dict[str, Any] | None):
    """Pre-hook for one ``o_proj``: heads where ``rows`` (B, 1, H, 1) is True get ``value`` (H, d),
    except at position 0 when ``positions`` (filled by ``_read_positions``) is given."""
    import torch

    def hook(_, args):
        x = args[0]
        batch, t, _ = x.shape
        split = x.reshape(batch, t, shape.heads, shape.head_dim)
        where = rows
        if positions is not None:
            at = positions.get("ids")
            at = torch.arange(t)[None] if at is None or at.shape[-1] != t else at.reshape(-1, t)
            where = rows & (at != 0).to(x.device)[:, :, None, None]  # (B, T, H, 1)
        out = torch.where(where, value.to(x.dtype)[None, None], split)
        return (out.reshape(batch, t, -1), *args[1:])

    return this_thread_only(hook)


def next_token_probs(module: Any, ids: Sequence[int] | Any) -> np.ndarray:
    """(vocab,) float64: the probability of each token coming next after ``ids``."""
    return softmax(run(module, ids)[0][-1].astype(np.float64))
