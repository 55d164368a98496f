"""A run in which every receiver reads its own input, so that each edge of a decoder can be patched.

Senders write into the residual stream: the embeddings, each head (its output through its slice of
the output projection and, in Gemma 2 and 3, through the norm after attention, that norm's scale
taken from the whole attention output) and each MLP (through its norm after it, where it has one).
Receivers read it: each query head's query input, each key/value head's key and value inputs,
each MLP's input and the final norm's input (the logits). In a normal run they all read one
stream; here each reads its own copy of the sum of the senders before it (and the output biases),
and an edge can carry another run's output of its sender instead:

    graph = Graph.of(adapter)                       # senders, receivers, which edges exist
    run = edge_run(model, ids, normed_metric=m, grads=True)  # outputs (S, T, hidden), grads (R, T, hidden)
    patched = edge_run(model, ids, normed_metric=m, other=run.outputs, swapped=mask)  # mask (S, R) bool

A layer's query, key and value receivers go through its attention as one batch of H + 2·KV rows
(row r computes every head; the taps keep head h's query from row h, and so on), or one row where
their inputs are all the same and no gradient is asked for; everything after the taps runs on
rows that are all the same. torch is imported by the callers.
"""

from __future__ import annotations

from collections.abc import Callable
from contextlib import ExitStack
from dataclasses import dataclass
from functools import cached_property
from typing import Any

import numpy as np

from core.decoder.adapter import adapter_of, norm_eps
from core.decoder.hooks import Tap, attach, first_tensor, hidden_of, tapped, this_thread_only, with_hidden
from core.decoder.sites import tl_row

__all__ = ["EdgeRun", "Graph", "edge_run", "norm_gain"]


@dataclass(frozen=True)
class Graph:
    """The senders and receivers of a decoder with ``layers`` × ``heads`` (``kv_heads`` key/value
    heads); ``parallel``: each MLP reads its block's input, not the stream after attention.

    Senders: 0 the embeddings, then per layer its heads and its MLP. Receivers: per layer the
    query of each head, the key and the value of each key/value head, the MLP's input; then the
    logits. Layers and heads count from 0 here, from 1 in names.
    """

    layers: int
    heads: int
    kv_heads: int
    parallel: bool = False

    @classmethod
    def of(cls, adapter: Any) -> Graph:
        shape = adapter.shape
        return cls(shape.layers, shape.heads, shape.kv_heads, adapter.parallel)

    @property
    def senders(self) -> int:
        return 1 + self.layers * (self.heads + 1)

    @property
    def per_layer(self) -> int:
        """Receivers per layer: queries, keys, values and the MLP's input."""
        return self.heads + 2 * self.kv_heads + 1

    @property
    def receivers(self) -> int:
        return self.layers * self.per_layer + 1

    def head(self, layer: int, head: int) -> int:
        """The sender index of a head."""
        return 1 + layer * (self.heads + 1) + head

    def mlp(self, layer: int) -> int:
        """The sender index of an MLP."""
        return 1 + layer * (self.heads + 1) + self.heads

    def attention_inputs(self, layer: int) -> slice:
        """The receiver indices of ``layer``'s queries, keys and values."""
        first = layer * self.per_layer
        return slice(first, first + self.per_layer - 1)

    def mlp_input(self, layer: int) -> int:
        return (layer + 1) * self.per_layer - 1

    @property
    def logits(self) -> int:
        return self.receivers - 1

    @cached_property
    def sender_names(self) -> tuple[str, ...]:
        names = ["embeddings"]
        for layer in range(self.layers):
            names += [f"L{layer + 1} H{h + 1}" for h in range(self.heads)] + [f"L{layer + 1} MLP"]
        return tuple(names)

    @cached_property
    def receiver_names(self) -> tuple[tuple[str, str | None], ...]:
        """(node, input) per receiver: ("L3 H2", "q"), ("L3 KV1", "k") where key/value heads are
        shared (named "L3 H1" when every head has its own), ("L3 MLP", None), ("logits", None)."""
        kv = "H" if self.kv_heads == self.heads else "KV"
        out: list[tuple[str, str | None]] = []
        for layer in range(self.layers):
            n = layer + 1
            out += [(f"L{n} H{h + 1}", "q") for h in range(self.heads)]
            for part in "kv":
                out += [(f"L{n} {kv}{g + 1}", part) for g in range(self.kv_heads)]
            out.append((f"L{n} MLP", None))
        return (*out, ("logits", None))

    @cached_property
    def sender_rows(self) -> tuple[dict, ...]:
        """Each sender as TransformerLens names it (``tl_row``): the stream entering block 0, a
        head's result, an MLP's output."""
        rows = [tl_row("resid_pre", 0)]
        for layer in range(self.layers):
            rows += [tl_row("result", layer, h) for h in range(self.heads)] + [tl_row("mlp_out", layer)]
        return tuple(rows)

    @cached_property
    def receiver_rows(self) -> tuple[dict, ...]:
        """Each receiver as TransformerLens names it: a head's split query, key or value input (a
        key/value head's index for k and v), an MLP's input, the stream the logits read."""
        rows = []
        for layer in range(self.layers):
            rows += [tl_row("q_input", layer, h) for h in range(self.heads)]
            rows += [tl_row(f"{part}_input", layer, g) for part in "kv" for g in range(self.kv_heads)]
            rows.append(tl_row("mlp_in", layer))
        return (*rows, tl_row("resid_post", self.layers - 1))

    @cached_property
    def receiver_nodes(self) -> tuple[tuple[int, ...], ...]:
        """The nodes each receiver feeds: a head's sender index (every head of the group for a
        shared key or value), an MLP's, or ``senders`` for the logits."""
        groups = self.heads // self.kv_heads
        out: list[tuple[int, ...]] = []
        for layer in range(self.layers):
            out += [(self.head(layer, h),) for h in range(self.heads)]
            for _ in "kv":
                out += [
                    tuple(self.head(layer, g * groups + i) for i in range(groups))
                    for g in range(self.kv_heads)
                ]
            out.append((self.mlp(layer),))
        return (*out, (self.senders,))

    @cached_property
    def exists(self) -> np.ndarray:
        """(S, R) bool: sender s writes before receiver r reads (a head feeds its own layer's MLP
        unless the block is parallel)."""
        sent, read = [0], []
        for layer in range(self.layers):
            sent += [2 * layer + 1] * self.heads + [2 * layer + 2]
            read += [2 * layer + 1] * (self.per_layer - 1) + [2 * layer + (1 if self.parallel else 2)]
        read.append(2 * self.layers + 1)
        return np.array(sent)[:, None] < np.array(read)[None, :]


def norm_gain(norm: Any) -> tuple[Any, float]:
    """An RMSNorm module's (hidden,) float64 gain (the weight, or Gemma's 1 + weight) and eps."""
    import torch

    eps = norm_eps(norm)
    width = norm.weight.shape[0]
    with torch.no_grad():  # a vector of ones has rms 1: the output is gain / √(1 + eps)
        gain = norm(torch.ones(1, width, dtype=norm.weight.dtype))[0].double() * (1 + eps) ** 0.5
    return gain, eps


@dataclass
class EdgeRun:
    """What an edge run gave."""

    metric: float
    outputs: Any  # (S, T, hidden) torch, detached: each sender's output, in ``Graph`` order
    grads: Any  # (R, T, hidden) torch or None: d metric / d each receiver's input
    normed: Any  # (T, hidden) torch, detached: the final norm's output


def edge_run(
    model: Any,
    ids: Any,
    *,
    normed_metric: Callable[[Any], Any],
    other: Any = None,
    swapped: Any = None,
    embeddings: Any = None,
    grads: bool = False,
    tick: Callable[[], None] | None = None,
) -> EdgeRun:
    """Run ``model`` (a LoadedModel decoder) over ``ids`` ((T,) token ids) with split receivers.

    ``normed_metric(normed)`` gives one number from the (1, T, hidden) final norm's output (the
    hooked run's ``metric`` with ``unembed=False``: it costs no unembedding). ``other``
    (S, T, hidden): another run's sender outputs, carried by the edges where ``swapped`` (S, R,
    bool) is set. ``embeddings`` (T, hidden): the embeddings sender's output in place of the
    model's own (an integrated-gradients path). ``grads``: the metric's gradient with respect to
    every receiver's input (not with ``swapped``). ``tick()`` is called as each block starts; what
    it raises ends the run.
    """
    import torch

    adapter = adapter_of(model.module)
    graph = Graph.of(adapter)
    if grads and swapped is not None:
        raise ValueError("An edge run takes gradients or swaps edges, not both.")
    split = _Split(adapter, graph, other, swapped, embeddings, grads, tick or (lambda: None))
    tokens = torch.as_tensor(ids, dtype=torch.long).reshape(1, -1)
    with ExitStack() as stack:
        stack.enter_context(torch.enable_grad() if grads else torch.inference_mode())
        split.install(stack)
        stack.enter_context(tapped(split))
        normed = adapter.body(input_ids=tokens, use_cache=False).last_hidden_state
        value = normed_metric(normed)
        taken = torch.autograd.grad(value.reshape(()), split.inputs) if grads else None
    return EdgeRun(
        float(value.detach()),
        torch.cat(split.outputs).detach(),
        None if taken is None else torch.cat(taken).detach(),
        normed[0].detach(),
    )


class _Split(Tap):
    """The hooks and taps of one edge run: senders recorded, receivers' inputs rebuilt."""

    def __init__(self, adapter, graph, other, swapped, embeddings, grads, tick):
        import torch

        self.adapter, self.graph, self.grads, self.tick = adapter, graph, grads, tick
        self.embeddings = embeddings
        self.other = other
        self.swapped = self.touched = None
        if swapped is not None:
            mask = np.asarray(swapped) & graph.exists
            self.touched = mask.any(0)  # (R,): the receivers with a swapped edge
            self.swapped = torch.as_tensor(mask).to(other.dtype)
        self.outputs: list[Any] = []  # (n, T, hidden) per sender group, in order
        self.inputs: list[Any] = []  # (rows, T, hidden) per receiver group, in order
        self.stream = self.before = None  # (1, T, hidden): the sum of this run's senders so far

    def _send(self, written: Any, const: Any = 0) -> None:
        """Record (n, T, hidden) sender outputs and add them (and ``const``) to the stream."""
        self.outputs.append(written)
        self.stream = self.stream + written.sum(0, keepdim=True) + const

    def _receive(self, base: Any, rows: slice | int) -> Any:
        """The inputs of receivers ``rows``: ``base`` plus, on each swapped edge, the other run's
        output of its sender less this run's; one row for them all where they are all the same
        (no gradients asked for), since the taps then have nothing to choose between."""
        import torch

        width = len(range(self.graph.receivers)[rows]) if isinstance(rows, slice) else 1
        if self.swapped is None or not self.touched[rows].any():
            got = base.repeat(width, 1, 1) if self.grads else base
        else:
            mine = torch.cat(self.outputs)
            n = mine.shape[0]
            weights = self.swapped[:n, rows].reshape(n, width)
            used = weights.any(1)
            if (weights == weights[:, :1]).all():
                weights = weights[:, :1]
            got = base + torch.einsum("sr,sth->rth", weights[used], (self.other[:n] - mine)[used])
        self.inputs.append(got)
        return got

    def install(self, stack: ExitStack) -> None:
        adapter = self.adapter

        def hook(part, made, pre=True):
            attach(stack, part, this_thread_only(made), pre)

        for layer, block in enumerate(adapter.blocks):
            hook(block, self._entering(layer))
            hook(adapter.mlp_norm(layer), self._mlp_input(layer))
            hook(adapter.mlp(layer), self._mlp_output(layer), pre=False)
        hook(adapter.final_norm, self._final)

    def _entering(self, layer: int):
        def enter(_, args, kwargs):
            self.tick()
            if layer == 0:
                given = hidden_of(args, kwargs)
                first = given if self.embeddings is None else self.embeddings.to(given.dtype)[None]
                if self.grads:
                    first = first.detach().requires_grad_(True)
                self.stream = first
                self.outputs.append(first)
            self.before = self.stream
            return with_hidden(args, kwargs, self._receive(self.stream, self.graph.attention_inputs(layer)))

        return enter

    def _mlp_input(self, layer: int):
        def enter(_, args, kwargs):
            base = self.before if self.adapter.parallel else self.stream
            return with_hidden(args, kwargs, self._receive(base, self.graph.mlp_input(layer)))

        return enter

    def _mlp_output(self, layer: int):
        def leave(_, __, output):
            out = first_tensor(output)
            norm = self.adapter.after_norm(layer, "mlp")
            self._send(out if norm is None else norm(out))

        return leave

    def _final(self, _, args, kwargs):
        return with_hidden(args, kwargs, self._receive(self.stream, self.graph.logits))

    def qkv(self, layer: int, q: Any, k: Any, v: Any) -> tuple[Any, Any, Any]:
        import torch

        h, g = self.graph.heads, self.graph.kv_heads
        rows = q.shape[0]
        if rows == 1:  # every receiver of this layer reads the same input
            return q, k, v
        heads, groups = torch.arange(h), torch.arange(g)
        q = q[heads, heads][None].expand(rows, -1, -1, -1)
        k = k[h + groups, groups][None].expand(rows, -1, -1, -1)
        v = v[h + g + groups, groups][None].expand(rows, -1, -1, -1)
        return q, k, v

    def heads(self, layer: int, z: Any, weights: Any, value: Any) -> Any:
        import torch

        adapter, shape = self.adapter, self.adapter.shape
        weight = adapter.out_weight(layer).reshape(shape.hidden, shape.heads, shape.head_dim)
        written = torch.einsum("thd,nhd->htn", z[0], weight.to(z.dtype))  # (heads, T, hidden)
        bias = getattr(adapter.out_proj(layer), "bias", None)
        const = 0 if bias is None else bias.to(z.dtype)
        norm = adapter.after_norm(layer, "attn")
        if norm is not None:  # the norm after attention, its scale from the whole output
            gain, eps = norm_gain(norm)
            total = written.sum(0) + const
            scale = gain.to(z.dtype) * (total.pow(2).mean(-1, keepdim=True) + eps).rsqrt()
            written, const = written * scale, const * scale
        self._send(written, const)
        return z
