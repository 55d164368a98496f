"""The hooks activation patching runs a decoder with: read every activation of one run, and copy
activations from another run into chosen batch rows. Used by ``core.interp.patching``.

Sites (what can be copied), per layer l, shapes of one run (T tokens):

    resid    the residual stream entering block l (l = layers: leaving the last block)  (T, hidden)
    attn     the attention module's output, after the output projection              (T, hidden)
    mlp      the MLP's output                                                        (T, hidden)
    z        each head's output before the output projection                         (T, heads, d)
    q        queries after rotary                                                    (heads, T, d)
    k, v     keys after rotary, values                                           (kv_heads, T, d)
    pattern  each head's attention weights                                           (heads, T, T)

A patched batch runs one site of one layer: row i gets the source run's activation of head
``heads[i]`` (where the site has heads) at position ``positions[i]`` (or at every position).
Everything goes through ``core.decoder.adapter`` and ``core.decoder.hooks``; torch is imported
by the callers.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from typing import Any

from core.decoder.hooks import Tap, first_tensor, hidden_of, tapped, this_thread_only, with_hidden

SITES = ("resid", "attn", "mlp", "z", "q", "k", "v", "pattern")
HEAD_SITES = ("z", "q", "k", "v", "pattern")


@dataclass(frozen=True)
class Cells:
    """One patched batch: ``site`` of ``layer``; per row the head and position copied (None: all)."""

    site: str
    layer: int
    heads: Any = None  # (B,) int64 torch, or None for the sites without heads
    positions: Any = None  # (B,) int64 torch, or None: every position
    rows: int = 1
    offset: int = 0  # tokens before the run, read from a cache: positions count from there

    def changed(self, source: dict, receiving: dict, groups: int) -> Any:
        """(B,) bool: the rows whose copy changes anything (the others would rerun the receiving
        run: e.g. every position before the first token where the prompts differ)."""
        import torch

        a, b = source[self.site][self.layer][0], receiving[self.site][self.layer][0]
        if self.site == "z":  # (T, heads, d) -> (heads, T, d)
            a, b = a.transpose(0, 1), b.transpose(0, 1)
        out = []
        for i in range(self.rows):
            where = (
                () if self.heads is None else (int(self.heads[i]) // (groups if self.site in "kv" else 1),)
            )
            where += () if self.positions is None else (int(self.positions[i]),)
            out.append(not torch.equal(a[where], b[where]))
        return torch.tensor(out, dtype=torch.bool)

    def only(self, rows: Any) -> Cells:
        """These cells with only ``rows`` (a (B,) bool mask) left."""
        pick = lambda x: None if x is None else x[rows]  # noqa: E731
        return Cells(
            self.site, self.layer, pick(self.heads), pick(self.positions), int(rows.sum()), self.offset
        )


class Catch(Tap):
    """Keeps q, k, v (B, heads|kv_heads, T, d), z (B, T, heads, d) and the weights (B, heads, T, T)
    of every layer in ``acts[site][layer]``."""

    def __init__(self, acts: dict[str, dict[int, Any]]):
        self.acts = acts

    def qkv(self, layer, q, k, v):
        self.acts["q"][layer], self.acts["k"][layer], self.acts["v"][layer] = q, k, v
        return q, k, v

    def heads(self, layer, z, weights, value):
        self.acts["z"][layer], self.acts["pattern"][layer] = z, weights
        return z


@contextmanager
def caught(adapter: Any, root_grad: bool = False) -> Iterator[dict[str, dict[int, Any]]]:
    """Inside the block, a forward pass keeps every site of every layer (whole batch tensors,
    the graph kept when gradients are on). With ``root_grad`` the embeddings are made a leaf that
    needs a gradient, so every activation after them has one."""
    acts: dict[str, dict[int, Any]] = {site: {} for site in SITES}
    last = len(adapter.blocks) - 1

    def keep_input(layer: int):
        def hook(_, args, kwargs):
            hidden = hidden_of(args, kwargs)
            if layer == 0 and root_grad and not hidden.requires_grad:
                hidden = hidden.detach().requires_grad_(True)
            acts["resid"][layer] = hidden
            return with_hidden(args, kwargs, hidden)

        return hook

    def keep_output(site: str, layer: int):
        def hook(_, __, output):
            acts[site][layer] = first_tensor(output)

        return hook

    with ExitStack() as stack:
        for layer, block in enumerate(adapter.blocks):
            pre = block.register_forward_pre_hook(this_thread_only(keep_input(layer)), with_kwargs=True)
            stack.callback(pre.remove)
            for site, part in (("attn", adapter.attention(layer)), ("mlp", adapter.mlp(layer))):
                stack.callback(part.register_forward_hook(this_thread_only(keep_output(site, layer))).remove)
        out = adapter.blocks[last].register_forward_hook(this_thread_only(keep_output("resid", last + 1)))
        stack.callback(out.remove)
        stack.enter_context(tapped(Catch(acts)))
        yield acts


def _replaced(output: Any, tensor: Any) -> Any:
    return (tensor, *output[1:]) if isinstance(output, tuple) else tensor


def _write(x: Any, cells: Cells, source: Any) -> Any:
    """``x`` (B, T − offset, …) with row i at ``positions[i]`` (every position: None) from
    ``source`` (T, …)."""
    x = x.clone()
    o = cells.offset
    if cells.positions is None:
        x[:] = source[o:].to(x.dtype)
    else:
        x[list(range(cells.rows)), cells.positions - o] = source[cells.positions].to(x.dtype)
    return x


class Copy(Tap):
    """Copies one head site of one layer from ``source`` (one run's activations, batch row 0)
    into the rows of ``cells``; ``receiving`` is the run being patched, to undo what a shared
    key/value head changes in the other query heads of its group. After ``offset`` cached tokens,
    q, z and the weights' rows cover the later positions only; k and v cover them all."""

    def __init__(self, cells: Cells, source: dict, receiving: dict, groups: int):
        self.cells, self.source, self.receiving, self.groups = cells, source, receiving, groups

    def qkv(self, layer, q, k, v):
        c = self.cells
        if layer != c.layer or c.site not in ("q", "k", "v"):
            return q, k, v
        which = {"q": q, "k": k, "v": v}[c.site]
        heads = c.heads if c.site == "q" else c.heads // self.groups
        which = which.clone()
        src = self.source[c.site][layer][0].to(which.dtype)  # (heads, T, d)
        o = c.offset if c.site == "q" else 0
        rows = list(range(c.rows))
        if c.positions is None:
            which[rows, heads] = src[heads, o:]
        else:
            which[rows, heads, c.positions - o] = src[heads, c.positions]
        return {"q": (which, k, v), "k": (q, which, v), "v": (q, k, which)}[c.site]

    def heads(self, layer, z, weights, value):
        import torch

        c = self.cells
        if layer != c.layer:
            return z
        rows, o = list(range(c.rows)), c.offset
        if c.site == "z":
            z = z.clone()
            src = self.source["z"][layer][0].to(z.dtype)  # (T, heads, d)
            if c.positions is None:
                z[rows, :, c.heads] = src[o:, c.heads].transpose(0, 1)
            else:
                z[rows, c.positions - o, c.heads] = src[c.positions, c.heads]
        elif c.site == "pattern":  # the head's output recomputed with the source's weights
            z = z.clone()
            w = self.source["pattern"][layer][0][c.heads].to(value.dtype)  # (B, T, T)
            v = value[rows, c.heads // self.groups]  # (B, T, d)
            if c.positions is None:
                z[rows, :, c.heads] = (w[:, o:] @ v).to(z.dtype)
            else:
                mixed = torch.einsum("bs,bsd->bd", w[rows, c.positions], v)
                z[rows, c.positions - o, c.heads] = mixed.to(z.dtype)
        elif c.site in ("k", "v") and self.groups > 1:  # only the chosen query head sees the copy
            heads = torch.arange(z.shape[2])
            shared = (heads[None] // self.groups == (c.heads // self.groups)[:, None]) & (
                heads[None] != c.heads[:, None]
            )
            z = torch.where(shared[:, None, :, None], self.receiving["z"][layer][:, o:].to(z.dtype), z)
        return z


@contextmanager
def patched(adapter: Any, cells: Cells, source: dict, receiving: dict) -> Iterator[None]:
    """Inside the block, a forward pass of a batch of one repeats it ``cells.rows`` times on
    entering the layer patched (the layers before run once) and copies the cells from ``source``."""
    shape = adapter.shape
    layer = min(cells.layer, shape.layers - 1)
    copy_input = cells.site == "resid" and cells.layer < shape.layers

    def enter(_, args, kwargs):
        hidden = hidden_of(args, kwargs).expand(cells.rows, -1, -1)
        if copy_input:
            hidden = _write(hidden, cells, source["resid"][layer][0])
        return with_hidden(args, kwargs, hidden)

    def leave(_, __, output):
        return _replaced(output, _write(first_tensor(output), cells, source[cells.site][cells.layer][0]))

    with ExitStack() as stack:
        handle = adapter.blocks[layer].register_forward_pre_hook(this_thread_only(enter), with_kwargs=True)
        stack.callback(handle.remove)
        part = {"attn": adapter.attention, "mlp": adapter.mlp}.get(cells.site)
        if cells.site == "resid" and not copy_input:
            part = lambda _: adapter.blocks[-1]  # noqa: E731  the stream leaving the last block
        if part is not None and not copy_input:
            stack.callback(part(layer).register_forward_hook(this_thread_only(leave)).remove)
        if cells.site in HEAD_SITES:
            groups = shape.heads // shape.kv_heads
            stack.enter_context(tapped(Copy(cells, source, receiving, groups)))
        yield


def prefix_cache(adapter: Any, ids: Any, length: int) -> Any:
    """The KV cache of a run of ``ids[:, :length]`` (batch of one), or None when ``length`` is 0:
    the tokens before the first difference are the same in every patched run."""
    import torch

    if length == 0:
        return None
    with torch.inference_mode():
        return adapter.body(input_ids=ids[:, :length], use_cache=True).past_key_values


def cache_for(adapter: Any, prefix: Any, cells: Cells) -> dict:
    """The keywords that run the body after ``prefix`` for one patched batch (none without one):
    a copy of the cache, a batch of one below the layer the batch is repeated from (see
    ``patched``), ``cells.rows`` rows from there on."""
    import copy
    import inspect

    if prefix is None:
        return {"use_cache": False}
    layers = adapter.shape.layers

    cache = copy.deepcopy(prefix)
    for layer in range(min(cells.layer, layers - 1), layers):
        part = cache.layers[layer]
        part.keys = part.keys.expand(cells.rows, -1, -1, -1)
        part.values = part.values.expand(cells.rows, -1, -1, -1)
    name = "cache" if "cache" in inspect.signature(adapter.body.forward).parameters else "past_key_values"
    return {name: cache, "use_cache": True}
