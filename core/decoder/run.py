"""One hooked run of a decoder: named sites read into a cache, changed, and differentiated.

    out = hooked_run(model, ids, cache=["resid_post", ("pattern", 3)])
    out.cache["resid_post", 0]          # (batch, T, hidden): the stream after the first block
    out = hooked_run(model, ids, edits=[Edit("z", 5, "zero", heads=2)])       # head 2 of layer 5 off
    out = hooked_run(model, ids, grads=["attn_out"], metric=lambda logits: logits[0, -1, 7])
    out.grads["attn_out", 0]            # d metric / d (layer 0's attention output), same shape

Sites (``SITES``), named as TransformerLens names them, layers and heads counted from 0:

| site | shape | TransformerLens | what |
|---|---|---|---|
| resid_pre | (batch, T, hidden) | blocks.L.hook_resid_pre | the stream entering block L |
| attn_out | (batch, T, hidden) | blocks.L.hook_attn_out | what attention writes (see below) |
| mlp_out | (batch, T, hidden) | blocks.L.hook_mlp_out | what the MLP writes (see below) |
| resid_post | (batch, T, hidden) | blocks.L.hook_resid_post | the stream leaving block L |
| q | (batch, heads, T, head_dim) | blocks.L.attn.hook_q | queries after rotary (TL: T first) |
| k, v | (batch, kv_heads, T, head_dim) | blocks.L.attn.hook_k, hook_v | keys after rotary, values |
| pattern | (batch, heads, T, T) | blocks.L.attn.hook_pattern | attention weights |
| z | (batch, T, heads, head_dim) | blocks.L.attn.hook_z | each head's output before the output projection |
| rotary | (2, 1, T, rotary dims) | (none) | the cos and sin that rotate q and k, one for every row |
| final_in | (batch, T, hidden) | ln_final's input | the stream the final norm reads (layer None) |
| logits | (batch, T, vocab) | the model's output | (layer None) |

attn_out and mlp_out are the attention's and the MLP's own outputs: Gemma 2 and 3 normalise them
again before adding them to the stream.

An edit changes a site as the run passes it: ``replace`` (by ``value``, broadcast to the site's
shape), ``add`` (``value``), ``scale`` (by ``value``) or ``zero``, at chosen ``positions`` (the
query positions of a pattern), ``heads`` and batch ``row``; a batch of rows, each with its own
edits, is one run of a sweep. An edited pattern gives the head's output again from the new
weights. Hooks act only in the thread that runs, and are gone when the run ends, however it ends.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from contextlib import ExitStack
from dataclasses import dataclass, field
from typing import Any

from core.decoder.adapter import adapter_of
from core.decoder.hooks import Tap, first_tensor, hidden_of, tapped, this_thread_only, with_hidden

__all__ = ["OPS", "SITES", "Edit", "HookedRun", "hooked_run"]

# site -> its axes: "p" positions, "h" query heads, "g" key/value heads (None: not per head)
SITES = {
    "resid_pre": "bp.",
    "attn_out": "bp.",
    "mlp_out": "bp.",
    "resid_post": "bp.",
    "q": "bhp.",
    "k": "bgp.",
    "v": "bgp.",
    "pattern": "bhp.",
    "z": "bph.",
    "rotary": "..p.",
    "final_in": "bp.",
    "logits": "bp.",
}
LAYERLESS = ("final_in", "logits")
OPS = ("replace", "add", "scale", "zero")
Site = tuple[str, int | None]


@dataclass(frozen=True)
class Edit:
    """A change of ``site`` at ``layer`` (None for final_in and logits) as the run passes it."""

    site: str
    layer: int | None
    op: str
    value: Any = None  # a tensor or number: what replaces, is added, or scales
    positions: int | Sequence[int] | None = None  # None: every position
    heads: int | Sequence[int] | None = None  # None: every head (per-head sites only)
    row: int | None = None  # the batch row; None: every row


@dataclass
class HookedRun:
    """What one run gave: its logits and metric, and the sites asked for, keyed (site, layer)."""

    logits: Any  # torch (batch, T, vocab), detached; None without the unembedding
    cache: dict[Site, Any] = field(default_factory=dict)  # torch, detached
    grads: dict[Site, Any] = field(default_factory=dict)  # torch, the shape of the site
    metric: float | None = None


def hooked_run(
    model: Any,
    ids: Any,
    *,
    cache: Iterable[str | Site] = (),
    edits: Iterable[Edit] = (),
    grads: Iterable[str | Site] = (),
    metric: Callable[[Any], Any] | None = None,
    unembed: bool = True,
) -> HookedRun:
    """Run ``model`` (a LoadedModel decoder) over ``ids`` ((T,) or (batch, T) token ids) once.

    ``cache`` and ``grads`` name sites: a name alone means every layer's. ``metric(logits)`` (a
    scalar torch tensor) is what the gradients are of. ``unembed=False`` stops after the final
    norm (no logits: a cache of the streams costs no unembedding). ValueError, naming what
    exists, for a site, layer, head, position, row or operation that does not.
    """
    import torch

    adapter = adapter_of(model.module)
    tokens = torch.as_tensor(ids, dtype=torch.long)
    tokens = tokens[None] if tokens.ndim == 1 else tokens
    if tokens.ndim != 2 or tokens.shape[1] == 0:
        raise ValueError(f"Token ids must be (T,) or (batch, T) with T ≥ 1, not shape {tuple(tokens.shape)}.")
    wanted = _sites(cache, adapter.shape.layers)
    asked = _sites(grads, adapter.shape.layers)
    if any(site == "rotary" for site, _ in asked):
        raise ValueError("The rotary site has no gradient: it is computed from the positions, not learned.")
    if asked and metric is None:
        raise ValueError("Gradients need a metric: a function of the logits that gives one number.")
    edits = list(edits)
    for edit in edits:
        _check_edit(edit, adapter.shape, tokens.shape)
    used = {site for site, _ in [*wanted, *asked, *((e.site, e.layer) for e in edits)]}
    if "rotary" in used and adapter.family.positions != "rotary":
        raise ValueError(f"{adapter.family.name} has no rotary site: it learns a table of positions instead.")
    if not unembed and (
        metric is not None or ("logits", None) in [*wanted, *((e.site, e.layer) for e in edits)]
    ):
        raise ValueError("Without the unembedding there are no logits to read, change or take a metric of.")
    run = _Run(edits, wanted, asked, adapter.shape)
    with ExitStack() as stack:
        # Without gradients, inference mode: the cache's tensors are then inference tensors
        # (``_apply`` copies one used as an edit's value in a run with gradients).
        stack.enter_context(torch.enable_grad() if asked else torch.inference_mode())
        _install(stack, adapter, run, bool(asked), "rotary" in used)
        stack.enter_context(tapped(run))
        if not unembed:
            adapter.body(input_ids=tokens, use_cache=False)
            return HookedRun(None, {key: run.live[key].detach() for key in wanted})
        logits = adapter.module(input_ids=tokens, use_cache=False).logits
        logits = run.passed("logits", None, logits)
        out = HookedRun(logits.detach(), {key: run.live[key].detach() for key in wanted})
        if metric is not None:
            value = metric(logits)
            if value.numel() != 1:
                raise ValueError(f"The metric must give one number; it gave shape {tuple(value.shape)}.")
            out.metric = float(value.detach())
            if asked:
                found = torch.autograd.grad(value.reshape(()), [run.live[key] for key in asked])
                out.grads = dict(zip(asked, found, strict=True))
    return out


class _Run(Tap):
    """The edits and reads of one run, applied wherever a site passes (hooks and the attention tap)."""

    def __init__(self, edits: list[Edit], cache: list[Site], grads: list[Site], shape: Any):
        self.edits: dict[Site, list[Edit]] = {}
        for edit in edits:
            self.edits.setdefault((edit.site, edit.layer), []).append(edit)
        self.kept = set(cache) | set(grads)
        self.live: dict[Site, Any] = {}  # the tensors that went on, for the cache and the gradients
        self.shape = shape

    def passed(self, site: str, layer: int | None, x: Any) -> Any:
        """``x`` at (site, layer) after its edits; kept when asked for."""
        for edit in self.edits.get((site, layer), ()):
            x = _apply(edit, x)
        if (site, layer) in self.kept:
            self.live[site, layer] = x
        return x

    def qkv(self, layer: int, q: Any, k: Any, v: Any) -> tuple[Any, Any, Any]:
        return self.passed("q", layer, q), self.passed("k", layer, k), self.passed("v", layer, v)

    def heads(self, layer: int, z: Any, weights: Any, value: Any) -> Any:
        pattern = self.passed("pattern", layer, weights)
        if pattern is not weights:  # an edited pattern: the heads' outputs from the new weights
            groups = pattern.shape[1] // value.shape[1]
            z = (pattern.to(value.dtype) @ value.repeat_interleave(groups, dim=1)).transpose(1, 2)
        return self.passed("z", layer, z)


def _install(stack: ExitStack, adapter: Any, run: _Run, grads: bool, rotary: bool) -> None:
    """Hooks on the blocks, attention, MLPs and final norm (and, with ``rotary``, on the cos and
    sin each attention is given), each removed when ``stack`` closes."""
    import torch

    def before(site: str, layer: int | None, first: bool = False):
        def hook(_, args, kwargs):
            given = hidden_of(args, kwargs)
            hidden = given
            if first and grads and not hidden.requires_grad:  # so that every later site has a gradient
                hidden = hidden.detach().requires_grad_(True)
            hidden = run.passed(site, layer, hidden)
            if hidden is given:
                return None
            return with_hidden(args, kwargs, hidden)

        return this_thread_only(hook)

    def after(site: str, layer: int):
        def hook(_, __, output):
            tensor = first_tensor(output)
            changed = run.passed(site, layer, tensor)
            if changed is tensor:
                return None
            return (changed, *output[1:]) if isinstance(output, tuple) else changed

        return this_thread_only(hook)

    def rotation(layer: int):
        def hook(_, args, kwargs):
            given = torch.stack(kwargs["position_embeddings"])
            changed = run.passed("rotary", layer, given)
            return None if changed is given else (args, {**kwargs, "position_embeddings": tuple(changed)})

        return this_thread_only(hook)

    for layer, block in enumerate(adapter.blocks):
        first = before("resid_pre", layer, first=layer == 0)
        parts = [
            block.register_forward_pre_hook(first, with_kwargs=True),
            block.register_forward_hook(after("resid_post", layer)),
            adapter.attention(layer).register_forward_hook(after("attn_out", layer)),
            adapter.mlp(layer).register_forward_hook(after("mlp_out", layer)),
        ]
        if rotary:
            attention = adapter.attention(layer)
            parts.append(attention.register_forward_pre_hook(rotation(layer), with_kwargs=True))
        for handle in parts:
            stack.callback(handle.remove)
    handle = adapter.final_norm.register_forward_pre_hook(before("final_in", None), with_kwargs=True)
    stack.callback(handle.remove)


def _sites(names: Iterable[str | Site], layers: int) -> list[Site]:
    """(site, layer) pairs: a name alone stands for every layer's (or its one, layer None)."""
    found: list[Site] = []
    for name in names:
        site, layer = (name, None) if isinstance(name, str) else name
        _check_site(site)
        if isinstance(name, str) and site not in LAYERLESS:
            found += [(site, n) for n in range(layers)]
        else:
            _check_layer(site, layer, layers)
            found.append((site, layer))
    return list(dict.fromkeys(found))


def _check_site(site: str) -> None:
    if site not in SITES:
        raise ValueError(f"There is no site {site!r}; the sites are {', '.join(SITES)}.")


def _check_layer(site: str, layer: int | None, layers: int) -> None:
    if site in LAYERLESS:
        if layer is not None:
            raise ValueError(f"{site} has no layer: give None, not {layer}.")
    elif not (isinstance(layer, int) and 0 <= layer < layers):
        raise ValueError(f"Layer {layer} of {site} does not exist: this model has layers 0 to {layers - 1}.")


def _indices(what: str, chosen: int | Sequence[int] | None, size: int) -> list[int] | None:
    if chosen is None:
        return None
    chosen = [chosen] if isinstance(chosen, int) else list(chosen)
    bad = [i for i in chosen if not (isinstance(i, int) and 0 <= i < size)]
    if bad or not chosen:
        raise ValueError(f"{what} {bad or chosen} do not exist: there are {size}, counted from 0.")
    return chosen


def _check_edit(edit: Edit, shape: Any, tokens: tuple[int, int]) -> None:
    _check_site(edit.site)
    _check_layer(edit.site, edit.layer, shape.layers)
    if edit.op not in OPS:
        raise ValueError(f"There is no operation {edit.op!r}; the operations are {', '.join(OPS)}.")
    if (edit.value is None) != (edit.op == "zero"):
        raise ValueError(f"{edit.op} {'takes no' if edit.op == 'zero' else 'needs a'} value.")
    axes = SITES[edit.site]
    if edit.heads is not None and not ({"h", "g"} & set(axes)):
        raise ValueError(f"{edit.site} is not per head: give heads only for q, k, v, pattern or z.")
    _indices("Heads", edit.heads, shape.kv_heads if "g" in axes else shape.heads)
    _indices("Positions", edit.positions, tokens[1])
    if edit.row is not None:
        if "b" not in axes:
            raise ValueError(f"{edit.site} is the same for every row: give no row.")
        _indices("Rows", edit.row, tokens[0])


def _apply(edit: Edit, x: Any) -> Any:
    """``x`` with ``edit`` done where its row, positions and heads select (a new tensor)."""
    import torch

    axes = SITES[edit.site]
    chosen = {"b": edit.row, "p": edit.positions, "h": edit.heads, "g": edit.heads}
    mask = torch.ones((), dtype=torch.bool, device=x.device)
    for dim, axis in enumerate(axes):
        picked = chosen.get(axis)
        if picked is not None:
            along = torch.zeros(x.shape[dim], dtype=torch.bool, device=x.device)
            along[picked] = True
            mask = mask & along.reshape([-1 if d == dim else 1 for d in range(x.ndim)])
    value = edit.value
    if isinstance(value, torch.Tensor):
        value = value.to(device=x.device, dtype=x.dtype)
        if value.is_inference() and torch.is_grad_enabled():  # another run's cache, in a run with gradients
            value = value.clone()
    new = {
        "replace": lambda: torch.broadcast_to(
            torch.as_tensor(value, dtype=x.dtype, device=x.device), x.shape
        ),
        "add": lambda: x + value,
        "scale": lambda: x * value,
        "zero": lambda: torch.zeros_like(x),
    }[edit.op]()
    return torch.where(mask, new, x)
