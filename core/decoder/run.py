"""One hooked run of a decoder: named sites read into a cache, changed, and differentiated.

    out = hooked_run(model, ids, cache=["resid_post", ("pattern", 3)])
    out.cache["resid_post", 0]          # (batch, T, hidden): the stream after the first block
    out = hooked_run(model, ids, edits=[Edit("z", 5, "zero", heads=2)])       # head 2 of layer 5 off
    out = hooked_run(model, ids, grads=["attn_out"], metric=lambda logits: logits[0, -1, 7])
    out.grads["attn_out", 0]            # d metric / d (layer 0's attention output), same shape

Sites (``SITES``), named as TransformerLens names them, layers and heads counted from 0, and
shaped as it shapes them: positions before heads in q, k, v and z, queries before keys in a pattern.

| site | shape | TransformerLens | what |
|---|---|---|---|
| resid_pre | (batch, T, hidden) | blocks.L.hook_resid_pre | the stream entering block L |
| attn_out | (batch, T, hidden) | blocks.L.hook_attn_out | what attention adds to the stream |
| mlp_out | (batch, T, hidden) | blocks.L.hook_mlp_out | what the MLP adds to the stream |
| attn_raw, mlp_raw | (batch, T, hidden) | ln1_post, ln2_post input | before Gemma 2/3's after-norm |
| resid_post | (batch, T, hidden) | blocks.L.hook_resid_post | the stream leaving block L |
| resid_mid | (batch, T, hidden) | blocks.L.hook_resid_mid | the stream the MLP reads (read only) |
| mlp_post | (batch, T, d_mlp) | blocks.L.mlp.hook_post | the MLP's neurons, what its last projection reads |
| result | (batch, T, heads, hidden) | blocks.L.attn.hook_result | each head's write (the bias apart) |
| q | (batch, T, heads, head_dim) | blocks.L.attn.hook_q | queries after rotary |
| k, v | (batch, T, kv_heads, head_dim) | blocks.L.attn.hook_k, hook_v | keys after rotary, values |
| pattern | (batch, heads, T, T) | blocks.L.attn.hook_pattern | attention weights |
| scores | (batch, heads, T, T) | blocks.L.attn.hook_attn_scores | before the softmax, masked −∞ (read only) |
| ln1_scale, ln2_scale | (batch, T, 1) | blocks.L.ln1.hook_scale, ln2 | what the norm divides by (read only) |
| final_scale | (batch, T, 1) | ln_final.hook_scale | the final norm's (layer None, read only) |
| z | (batch, T, heads, head_dim) | blocks.L.attn.hook_z | each head's output before the output projection |
| rotary | (2, 1, T, rotary dims) | (none) | the cos and sin that rotate q and k, one for every row |
| final_in | (batch, T, hidden) | ln_final's input | the stream the final norm reads (layer None) |
| logits | (batch, T, vocab) | the model's output | (layer None) |

resid_pre + attn_out + mlp_out = resid_post in every family.

An edit (``core.decoder.sites``) changes a site as the run passes it: ``replace`` (by ``value``,
broadcast to the site's shape), ``add`` (``value``), ``scale`` (by ``value``) or ``zero``, at
chosen ``positions`` (the query positions of a pattern), ``heads`` and batch ``row``, or at the
cells of a ``where`` mask; a batch of rows, each with its own edits, is one run of a sweep. An
edited pattern gives the head's output again from the new weights. A sweep whose edits start at
block L runs the blocks below once: ``fan_out=(L, rows)``; a sweep of several blocks grows its
batch at each, ``fan_out=[(L1, rows1), (L2, rows2), …]`` (rows2 − rows1 copies of row 0 join at
L2); one after a shared beginning reads it from a KV cache, ``past=prefix(model, ids[:n])``.
Hooks act only in the thread that runs, and are gone when the run ends, however it ends.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, field
from itertools import pairwise
from typing import Any

from core.decoder.adapter import adapter_of, norm_scale
from core.decoder.hooks import Tap, attach, first_tensor, hidden_of, tapped, this_thread_only, with_hidden
from core.decoder.sites import BESIDE, OPS, SITES, Edit, Site, apply, check_edit, sites

__all__ = [
    "OPS",
    "SITES",
    "Edit",
    "HookedRun",
    "cache_keywords",
    "editing",
    "full_cache",
    "hooked_run",
    "prefix",
]


@dataclass
class HookedRun:
    """What one run gave: its logits and metric, and the sites asked for, keyed (site, layer)."""

    logits: Any  # torch (batch, T, vocab), detached; None without the unembedding
    cache: dict[Site, Any] = field(default_factory=dict)  # torch, detached
    grads: dict[Site, Any] = field(default_factory=dict)  # torch, the shape of the site
    metric: float | None = None
    normed: Any = None  # torch (batch, T, hidden), detached: the final norm's output, without the unembedding
    past: Any = None  # with ``keep_past``: the KV cache after the run, for a next run's ``past``
    live: dict[Site, Any] = field(default_factory=dict)  # with ``retain``: the sites in the graph

    def stacked(self, site: str) -> Any:
        """(layers, …) torch: the cached ``site`` of every layer, first batch row."""
        import torch

        return torch.stack([self.cache[site, n][0] for n in sorted(n for s, n in self.cache if s == site)])


def hooked_run(
    model: Any,
    ids: Any,
    *,
    cache: Iterable[str | Site] = (),
    edits: Iterable[Edit] = (),
    grads: Iterable[str | Site] = (),
    metric: Callable[[Any], Any] | None = None,
    unembed: bool = True,
    retain: bool = False,
    fan_out: tuple[int, int] | Sequence[tuple[int, int]] | None = None,
    past: Any = None,
    keep_past: bool = False,
    grow_past: bool = False,
    last_logits: bool = False,
) -> HookedRun:
    """Run ``model`` (a LoadedModel decoder) over ``ids`` ((T,) or (batch, T) token ids) once.

    ``cache`` and ``grads`` name sites: a name alone means every layer's. ``metric`` (a function
    giving a scalar torch tensor) is what the gradients are of; it reads the logits or, with
    ``unembed=False`` (no unembedding: a cache of the streams costs none), the final norm's
    output. ``retain`` keeps the graph: ``live`` then holds the cached and differentiated sites
    as they ran, for gradients of one's own. ``fan_out=(L, rows)``: a batch of one below block L
    and ``rows`` copies of it from there on; a list of such stages, blocks and rows increasing, grows
    the batch to each stage's rows at its block by copies of row 0 (leave row 0 unedited to copy the
    run as it would go). ``past``: the KV cache of the tokens before ``ids``
    (from ``prefix``, or an earlier run's ``keep_past``), left as it is, or with ``grow_past``
    grown by this run's tokens (a decode step). ``last_logits``: the logits of the last position
    only, (batch, 1, vocab) (a large vocabulary costs T times less). ValueError, naming what
    exists, for a site, layer, head, position, row or operation that does not.
    """
    import torch

    adapter = adapter_of(model.module)
    tokens = torch.as_tensor(ids, dtype=torch.long)
    tokens = tokens[None] if tokens.ndim == 1 else tokens
    if tokens.ndim != 2 or tokens.shape[1] == 0:
        raise ValueError(f"Token ids must be (T,) or (batch, T) with T ≥ 1, not shape {tuple(tokens.shape)}.")
    layers = adapter.shape.layers
    wanted, asked = sites(cache, layers), sites(grads, layers)
    if any(site == "rotary" for site, _ in asked):
        raise ValueError("The rotary site has no gradient: it is computed from the positions, not learned.")
    beside = sorted({site for site, _ in asked if site in BESIDE})
    if beside:
        raise ValueError(
            f"{', '.join(beside)}: read beside the run, with no gradient; take the pattern's or the stream's."
        )
    if asked and metric is None:
        raise ValueError("Gradients need a metric: a function of the logits that gives one number.")
    stages = _stages(fan_out, tokens.shape[0], layers)
    edits = list(edits)
    before = 0 if past is None else past.get_seq_length()
    for edit in edits:
        rows = _rows_at(stages, layers if edit.layer is None else edit.layer, tokens.shape[0])
        check_edit(edit, adapter.shape, rows, before + tokens.shape[1])
    used = {site for site, _ in [*wanted, *asked, *((e.site, e.layer) for e in edits)]}
    if "rotary" in used and adapter.family.positions != "rotary":
        raise ValueError(f"{adapter.family.name} has no rotary site: it learns a table of positions instead.")
    if "resid_mid" in used and adapter.parallel:
        raise ValueError("This model has no resid_mid: its MLP reads the block's input beside attention.")
    if not unembed and "logits" in used:
        raise ValueError("Without the unembedding there are no logits to read or change.")
    if last_logits and "logits" in used:
        raise ValueError("With last_logits the logits site is not run: read the result's logits.")
    if grow_past and (past is None or fan_out is not None):
        raise ValueError("grow_past grows a past cache a batch of one runs on; give past, and no fan_out.")
    run = _Run(adapter, edits, wanted, asked, stages, before)
    with ExitStack() as stack:
        # Without gradients, no_grad rather than inference mode: the cached tensors are then
        # ordinary ones, which a user's own autograd may save for backward.
        stack.enter_context(torch.enable_grad() if asked else torch.no_grad())
        _install(stack, adapter, run, bool(asked), "rotary" in used)
        stack.enter_context(tapped(run))
        after = _after(adapter, past, stages, keep_past, grow_past)
        if unembed:
            done = adapter.module(input_ids=tokens, **after, **({"logits_to_keep": 1} if last_logits else {}))
            out = run.passed("logits", None, done.logits)
        else:
            done = adapter.body(input_ids=tokens, **after)
            out = done.last_hidden_state
        found = HookedRun(
            out.detach() if unembed else None,
            {key: run.live[key].detach() for key in wanted},
            normed=None if unembed else out.detach(),
            live=dict(run.live) if retain else {},
            past=done.past_key_values if keep_past else None,
        )
        if metric is not None:
            value = metric(out)
            if value.numel() != 1:
                raise ValueError(f"The metric must give one number; it gave shape {tuple(value.shape)}.")
            found.metric = float(value.detach())
            if asked:
                taken = torch.autograd.grad(
                    value.reshape(()), [run.live[k] for k in asked], retain_graph=retain
                )
                found.grads = dict(zip(asked, taken, strict=True))
    return found


def prefix(model: Any, ids: Any) -> Any:
    """The KV cache of a run of ``ids`` ((T,) token ids, T ≥ 1), for later runs' ``past``."""
    import torch

    with torch.inference_mode():
        tokens = torch.as_tensor(ids, dtype=torch.long).reshape(1, -1)
        body = adapter_of(model.module).body
        return body(input_ids=tokens, **cache_keywords(body, full_cache())).past_key_values


def full_cache() -> Any:
    """An empty KV cache that keeps every token in every layer (transformers' DynamicCache without
    the model's config). A sliding-window layer's mask, not its cache, then hides the keys outside
    its window, so every layer's keys count from the text's first token, as the taps expect."""
    from transformers import DynamicCache

    return DynamicCache()


def cache_keywords(module: Any, cache: Any) -> dict:
    """The keywords that run ``module`` (a model or its body) on with ``cache``: the cache under
    the name this transformers gives it (``cache``, formerly ``past_key_values``), and use_cache."""
    import inspect

    name = "cache" if "cache" in inspect.signature(module.forward).parameters else "past_key_values"
    return {name: cache, "use_cache": True}


@contextmanager
def editing(model: Any, edits: Iterable[Edit]) -> Iterator[None]:
    """Inside the block, every forward pass of ``model`` (a LoadedModel decoder) in this thread
    passes ``edits``, a generation with a KV cache too; only q, k, v, pattern and z edits may
    choose positions there (the others do not know where in the text a pass starts)."""
    adapter = adapter_of(model.module)
    edits = list(edits)
    for edit in edits:
        check_edit(edit, adapter.shape)
        if edit.positions is not None and edit.site not in ("q", "k", "v", "pattern", "z"):
            raise ValueError(f"Positions of {edit.site} need one run (hooked_run), not a generation.")
    if any(e.site == "rotary" for e in edits) and adapter.family.positions != "rotary":
        raise ValueError(f"{adapter.family.name} has no rotary site: it learns a table of positions instead.")
    if any(e.site == "logits" for e in edits):
        raise ValueError("A generation's logits are changed by its own sampling, not by an edit.")
    run = _Run(adapter, edits, [], [], (), None)
    with ExitStack() as stack:
        _install(stack, adapter, run, False, any(e.site == "rotary" for e in edits))
        stack.enter_context(tapped(run))
        yield


def _stages(fan_out: Any, batch: int, layers: int) -> tuple[tuple[int, int], ...]:
    """``fan_out`` as stages ((block, rows), …); ValueError for one that does not fit."""
    if fan_out is None:
        return ()
    stages = (tuple(fan_out),) if isinstance(fan_out[0], int) else tuple(map(tuple, fan_out))
    blocks, rows = zip(*stages, strict=True)
    rising = all(a < b for xs in (blocks, rows) for a, b in pairwise(xs))
    if batch != 1 or not (rising and blocks[0] >= 0 and blocks[-1] < layers and rows[0] >= 1):
        raise ValueError(
            f"A fan-out takes a batch of one to rows ≥ 1 at a block 0 to {layers - 1} (stages with blocks "
            f"and rows increasing), not {batch} to {fan_out}."
        )
    return stages


def _rows_at(stages: tuple[tuple[int, int], ...], layer: int, batch: int) -> int:
    """The batch at block ``layer`` (``layers``: after the last) of a run fanned out by ``stages``."""
    return max((rows for block, rows in stages if block <= layer), default=batch)


def _after(adapter: Any, past: Any, stages: tuple, keep: bool, grow: bool = False) -> dict:
    """The keywords that run the model after ``past`` (a copy of it, each layer's widened to the
    rows the fan-out's ``stages`` give it there; itself with ``grow``), or without a cache (a new
    one with ``keep``)."""
    import copy

    if past is None:
        return cache_keywords(adapter.body, full_cache()) if keep else {"use_cache": False}
    cache = past if grow else copy.deepcopy(past)
    for layer, part in enumerate(cache.layers):
        rows = _rows_at(stages, layer, 1)
        if rows > 1:
            part.keys = part.keys.expand(rows, -1, -1, -1)
            part.values = part.values.expand(rows, -1, -1, -1)
    return cache_keywords(adapter.body, cache)


class _Run(Tap):
    """The edits and reads of one run, applied wherever a site passes (hooks and the attention tap)."""

    def __init__(
        self, adapter: Any, edits: list[Edit], cache: list[Site], grads: list[Site], stages: tuple, start: Any
    ):
        self.adapter = adapter
        self.edits: dict[Site, list[Edit]] = {}
        for edit in edits:
            self.edits.setdefault((edit.site, edit.layer), []).append(edit)
        self.kept = set(cache) | set(grads)
        self.live: dict[Site, Any] = {}  # the tensors that went on, for the cache and the gradients
        self.grows = dict(stages)  # block → the batch's rows from it on (core.decoder.run._stages)
        self.start = start  # the text's position of the run's first token (None: not known)

    def touches(self, site: str, layer: int | None) -> bool:
        """Whether (site, layer) is edited or kept: only those get a hook."""
        return (site, layer) in self.edits or (site, layer) in self.kept

    def widen(self, layer: int, hidden: Any) -> Any:
        """(batch, T, hidden) entering block ``layer``, grown to the fan-out's rows there (copies of
        row 0)."""
        rows = self.grows.get(layer, hidden.shape[0])
        if hidden.shape[0] == 1:
            return hidden.expand(rows, -1, -1)
        import torch

        return torch.cat([hidden, hidden[:1].expand(rows - hidden.shape[0], -1, -1)])

    def passed(self, site: str, layer: int | None, x: Any, start: int | None = None) -> Any:
        """``x`` at (site, layer), its positions the text's from ``start`` (default: the run's),
        after its edits; kept when asked for."""
        for edit in self.edits.get((site, layer), ()):
            x = apply(edit, x, (self.start or 0) if start is None else start)
        if (site, layer) in self.kept:
            self.live[site, layer] = x
        return x

    def qkv(self, layer: int, q: Any, k: Any, v: Any) -> tuple[Any, Any, Any]:
        """The tap's (batch, heads, T, d) as the sites' (batch, T, heads, d), and back."""
        start = k.shape[2] - q.shape[2]  # the queries are the last of the keys
        q, k, v = (x.transpose(1, 2) for x in (q, k, v))
        q, k, v = (
            self.passed("q", layer, q, start),
            self.passed("k", layer, k, 0),
            self.passed("v", layer, v, 0),
        )
        return q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2)

    def scores(self, layer: int, q: Any, k: Any, mask: Any) -> None:
        """Keep (batch, heads, T, keys) q·kᵀ as the softmax sees it: scaled, capped where the model
        caps its scores, masked cells −∞, as TransformerLens's hook_attn_scores holds them."""
        import torch

        if ("scores", layer) not in self.kept:
            return
        keys = k.repeat_interleave(q.shape[1] // k.shape[1], dim=1)
        found = (q @ keys.transpose(2, 3)) * self.adapter.scaling(layer)
        cap = self.adapter.score_cap(layer)
        if cap:
            found = torch.tanh(found / cap) * cap
        if mask is not None:
            found = (found + mask).masked_fill(mask <= torch.finfo(mask.dtype).min / 2, -torch.inf)
        self.passed("scores", layer, found, k.shape[2] - q.shape[2])

    def heads(self, layer: int, z: Any, weights: Any, value: Any) -> Any:
        start = value.shape[2] - z.shape[1]
        pattern = self.passed("pattern", layer, weights, start)
        if pattern is not weights:  # an edited pattern: the heads' outputs from the new weights
            groups = pattern.shape[1] // value.shape[1]
            z = (pattern.to(value.dtype) @ value.repeat_interleave(groups, dim=1)).transpose(1, 2)
        return self.passed("z", layer, z, start)


def _install(stack: ExitStack, adapter: Any, run: _Run, grads: bool, rotary: bool) -> None:
    """Hooks on the blocks, attention, MLPs and final norm (and, with ``rotary``, on the cos and
    sin each attention is given) where the run reads or changes them, each removed when
    ``stack`` closes."""
    import torch

    def before(site: str, layer: int | None, first: bool = False):
        def hook(_, args, kwargs):
            given = hidden_of(args, kwargs)
            hidden = given
            if first and grads and not hidden.requires_grad:  # so that every later site has a gradient
                hidden = hidden.detach().requires_grad_(True)
            if site == "resid_pre" and layer in run.grows:
                hidden = run.widen(layer, hidden)
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

    def scale(site: str, layer: int | None):
        """A norm's divisor for each position (batch, T, 1), read as it is entered."""

        def hook(norm, args, kwargs):
            run.passed(site, layer, norm_scale(norm, hidden_of(args, kwargs)))

        return this_thread_only(hook)

    def results(layer: int):
        """The output projection as a sum of each head's write, (batch, T, heads, hidden)."""
        shape = adapter.shape
        weight = adapter.out_weight(layer).reshape(shape.hidden, shape.heads, shape.head_dim)

        def hook(module, args, ___):
            z = args[0].unflatten(-1, (shape.heads, shape.head_dim))  # (batch, T, heads, head_dim)
            each = run.passed("result", layer, torch.einsum("bthd,nhd->bthn", z, weight))
            bias = getattr(module, "bias", None)
            return each.sum(2) if bias is None else each.sum(2) + bias

        return this_thread_only(hook)

    def rotation(layer: int):
        def hook(_, args, kwargs):
            given = torch.stack(kwargs["position_embeddings"])
            changed = run.passed("rotary", layer, given)
            return None if changed is given else (args, {**kwargs, "position_embeddings": tuple(changed)})

        return this_thread_only(hook)

    def hook(site: str, layer: int | None, part: Any, made: Any, pre: bool = False) -> None:
        if run.touches(site, layer) or (
            site == "resid_pre" and ((layer == 0 and grads) or layer in run.grows)
        ):
            attach(stack, part, made, pre)

    for layer, block in enumerate(adapter.blocks):
        hook("resid_pre", layer, block, before("resid_pre", layer, first=layer == 0), pre=True)
        hook("resid_post", layer, block, after("resid_post", layer))
        for part, own in (("attn", adapter.attention(layer)), ("mlp", adapter.mlp(layer))):
            norm = adapter.after_norm(layer, part)  # Gemma 2 and 3 normalise a part's output again
            hook(f"{part}_raw", layer, own, after(f"{part}_raw", layer))
            hook(f"{part}_out", layer, own if norm is None else norm, after(f"{part}_out", layer))
        hook("result", layer, adapter.out_proj(layer), results(layer))
        if not adapter.parallel:
            hook("resid_mid", layer, adapter.mlp_norm(layer), before("resid_mid", layer), pre=True)
        hook("mlp_post", layer, adapter.mlp_down(layer), before("mlp_post", layer), pre=True)
        hook("ln1_scale", layer, adapter.pre_norm(layer), scale("ln1_scale", layer), pre=True)
        hook("ln2_scale", layer, adapter.mlp_norm(layer), scale("ln2_scale", layer), pre=True)
        if rotary:
            hook("rotary", layer, adapter.attention(layer), rotation(layer), pre=True)
    hook("final_in", None, adapter.final_norm, before("final_in", None), pre=True)
    hook("final_scale", None, adapter.final_norm, scale("final_scale", None), pre=True)
