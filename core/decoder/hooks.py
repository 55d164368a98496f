"""Reading and changing a decoder while it runs: module hooks and attention taps.

Every supported model runs its attention through ``attention_lab`` (registered with
transformers under that name by ``core.decoder.adapter``): it calls the family's own eager
attention, so the numbers are transformers', and lets the taps installed in this thread read or
replace each layer's queries, keys and values (after rotary) and each head's output:

    class Keep(Tap):
        def heads(self, layer, z, weights, value):   # z: (batch, T, heads, head_dim)
            seen[layer] = z
            return z

    with tapped(Keep()):
        module(input_ids=ids)

Taps and hooks act only in the thread that installed them, so another step running the same
model in the worker sees it intact. torch is imported by the callers.
"""

from __future__ import annotations

import sys
import threading
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any

__all__ = ["Tap", "attach", "entering", "recording", "tapped"]

NAME = "attention_lab"  # the attention implementation's name in transformers' registry
_local = threading.local()


class Tap:
    """What a run reads from, or writes into, every layer's attention; the defaults change nothing.

    Shapes: q (batch, heads, T, head_dim), k and v (batch, kv_heads, keys, head_dim), after rotary;
    z (batch, T, heads, head_dim), each head's output before the output projection; weights
    (batch, heads, T, keys). With a KV cache, the T queries are the last T of the keys.
    """

    def qkv(self, layer: int, q: Any, k: Any, v: Any) -> tuple[Any, Any, Any]:
        return q, k, v

    def scores(self, layer: int, q: Any, k: Any, mask: Any) -> None:
        """Sees the queries and keys the softmax will compare (after every ``qkv``) and the
        additive mask (batch, 1, T, keys) or None."""

    def heads(self, layer: int, z: Any, weights: Any, value: Any) -> Any:
        return z


@contextmanager
def tapped(*taps: Tap) -> Iterator[None]:
    """Inside the block, every forward pass in this thread goes through ``taps`` in order."""
    before = getattr(_local, "taps", ())
    _local.taps = (*before, *taps)
    try:
        yield
    finally:
        _local.taps = before


def attention_lab(module: Any, query: Any, key: Any, value: Any, attention_mask: Any, **kwargs):
    """The family's eager attention with this thread's taps around it: (output, weights)."""
    taps = getattr(_local, "taps", ())
    layer = module.layer_idx
    for tap in taps:
        query, key, value = tap.qkv(layer, query, key, value)
    mask = None if attention_mask is None else attention_mask[:, :, :, : key.shape[-2]]
    for tap in taps:
        tap.scores(layer, query, key, mask)
    eager = sys.modules[type(module).__module__].eager_attention_forward
    out, weights = eager(module, query, key, value, attention_mask, **kwargs)
    for tap in taps:
        out = tap.heads(layer, out, weights, value)
    return out, weights


def this_thread_only(hook: Callable) -> Callable:
    """``hook`` acting only in the thread that calls this; elsewhere it leaves the call alone."""
    owner = threading.get_ident()

    def guarded(*args, **kwargs):
        return hook(*args, **kwargs) if threading.get_ident() == owner else None

    return guarded


def attach(stack: Any, part: Any, hook: Callable, pre: bool = False) -> None:
    """Register ``hook`` on module ``part`` (``pre``: before it runs, with keywords), removed when
    the ExitStack ``stack`` closes."""
    if pre:
        handle = part.register_forward_pre_hook(hook, with_kwargs=True)
    else:
        handle = part.register_forward_hook(hook)
    stack.callback(handle.remove)


def first_tensor(output: Any) -> Any:
    """A module's main output: the tensor itself, or the first item of a tuple."""
    return output[0] if isinstance(output, tuple) else output


def hidden_of(args: tuple, kwargs: dict) -> Any:
    """A block's (or norm's) input tensor, from a pre-hook's ``args`` and ``kwargs``."""
    return args[0] if args else kwargs["hidden_states"]


def with_hidden(args: tuple, kwargs: dict, hidden: Any) -> tuple[tuple, dict]:
    """A pre-hook's (args, kwargs) with ``hidden`` as the input tensor."""
    return ((hidden, *args[1:]), kwargs) if args else (args, {**kwargs, "hidden_states": hidden})


@contextmanager
def entering(blocks: Sequence[Any], change: Callable[[int, Any], Any]) -> Iterator[None]:
    """Inside the block, ``change(index, hidden)`` is called in this thread as each of ``blocks``
    is entered, ``hidden`` its (batch, T, hidden) input; a tensor it returns becomes the input."""

    def hook(index: int):
        def enter(_, args, kwargs):
            changed = change(index, hidden_of(args, kwargs))
            return None if changed is None else with_hidden(args, kwargs, changed)

        return this_thread_only(enter)

    handles = [block.register_forward_pre_hook(hook(i), with_kwargs=True) for i, block in enumerate(blocks)]
    try:
        yield
    finally:
        for handle in handles:
            handle.remove()


@contextmanager
def recording(parts: Sequence[Any], inputs: bool = False) -> Iterator[dict[int, Any]]:
    """Inside the block, each forward pass in this thread keeps what each of ``parts``
    (sub-modules) returned, or with ``inputs`` what it received (its first argument): the
    yielded dict maps a part's index to its (T, width) torch tensor of the first batch row.
    The hooks are removed when the block ends, however it ends.
    """
    seen: dict[int, Any] = {}

    def keep(index: int):
        def read_input(_, args, kwargs):
            seen[index] = hidden_of(args, kwargs)[0]

        def read_output(_, __, output):
            seen[index] = first_tensor(output)[0]

        return this_thread_only(read_input if inputs else read_output)

    handles = [
        part.register_forward_pre_hook(keep(i), with_kwargs=True)
        if inputs
        else part.register_forward_hook(keep(i))
        for i, part in enumerate(parts)
    ]
    try:
        yield seen
    finally:
        for handle in handles:
            handle.remove()
