"""The sites of a hooked run (``core.decoder.run``) and the edits that change them as it passes.

    Edit("z", 5, "zero", heads=2)                         # head 2 of layer 5 off, every position
    Edit("resid_post", 9, "add", vector, positions=[3])  # a vector added to the stream at token 3
    Edit("z", 5, "replace", other, where=mask)            # ``other`` where the bool ``mask`` is set
    Edit("resid_post", 9, "remove", vector)               # the stream's component along ``vector`` gone

A site's axes (``SITES``): "b" batch rows, "p" positions, "h" query heads, "g" key/value heads
(``heads=`` on k and v counts these: fewer than the query heads under grouped-query attention);
"." an axis no edit selects along. Positions count from the start of the text, the tokens of a
``past`` KV cache included; ``slice(1, None)`` is every position but the first, however long
the text grows. torch is imported by the callers.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

__all__ = ["OPS", "SITES", "TL_HOOKS", "Edit", "Site", "tl_row"]

SITES = {
    "resid_pre": "bp.",
    "attn_out": "bp.",
    "mlp_out": "bp.",
    "attn_raw": "bp.",
    "mlp_raw": "bp.",
    "resid_mid": "bp.",
    "mlp_post": "bp.",
    "result": "bph.",
    "scores": "bhp.",
    "ln1_scale": "bp.",
    "ln2_scale": "bp.",
    "final_scale": "bp.",
    "resid_post": "bp.",
    "q": "bph.",
    "k": "bpg.",
    "v": "bpg.",
    "pattern": "bhp.",
    "z": "bph.",
    "rotary": "..p.",
    "final_in": "bp.",
    "logits": "bp.",
}
LAYERLESS = ("final_in", "final_scale", "logits")
READ_ONLY = {
    "resid_mid": "change attn_out (what attention adds) or resid_pre instead",
    "scores": "change the pattern, or q and k, instead",
    **dict.fromkeys(("ln1_scale", "ln2_scale", "final_scale"), "change the stream the norm reads instead"),
}
BESIDE = ("scores", "ln1_scale", "ln2_scale", "final_scale")  # computed beside the run: no gradient
OPS = ("replace", "add", "scale", "zero", "remove")
# TransformerLens's hook names ({layer} from 0): of the sites, and of the inputs an edge of a
# circuit feeds (its split query, key and value inputs and the MLP's input).
TL_HOOKS = {
    "resid_pre": "blocks.{layer}.hook_resid_pre",
    "resid_mid": "blocks.{layer}.hook_resid_mid",
    "resid_post": "blocks.{layer}.hook_resid_post",
    "attn_out": "blocks.{layer}.hook_attn_out",
    "mlp_out": "blocks.{layer}.hook_mlp_out",
    "q": "blocks.{layer}.attn.hook_q",
    "k": "blocks.{layer}.attn.hook_k",
    "v": "blocks.{layer}.attn.hook_v",
    "pattern": "blocks.{layer}.attn.hook_pattern",
    "scores": "blocks.{layer}.attn.hook_attn_scores",
    "z": "blocks.{layer}.attn.hook_z",
    "result": "blocks.{layer}.attn.hook_result",
    "mlp_post": "blocks.{layer}.mlp.hook_post",
    "ln1_scale": "blocks.{layer}.ln1.hook_scale",
    "ln2_scale": "blocks.{layer}.ln2.hook_scale",
    "final_scale": "ln_final.hook_scale",
    "q_input": "blocks.{layer}.hook_q_input",
    "k_input": "blocks.{layer}.hook_k_input",
    "v_input": "blocks.{layer}.hook_v_input",
    "mlp_in": "blocks.{layer}.hook_mlp_in",
}
Site = tuple[str, int | None]


@dataclass(frozen=True)
class Edit:
    """A change of ``site`` at ``layer`` (None for final_in and logits) as the run passes it."""

    site: str
    layer: int | None
    op: str
    value: Any = None  # a tensor or number: what replaces, is added, or scales
    positions: int | Sequence[int] | slice | None = None  # None: every position
    heads: int | Sequence[int] | None = None  # None: every head (per-head sites; on k, v key/value heads)
    row: int | None = None  # the batch row; None: every row
    where: Any = None  # a bool tensor broadcast to the site's shape: the cells (and those above)


def sites(names: Iterable[str | Site], layers: int) -> list[Site]:
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


def check_edit(edit: Edit, shape: Any, rows: int | None = None, tokens: int | None = None) -> None:
    """ValueError, naming what exists, for an edit of a run of ``rows`` × ``tokens`` (a past's
    included; None: not known yet) on a model of ``shape``."""
    _check_site(edit.site)
    _check_layer(edit.site, edit.layer, shape.layers)
    if edit.site in READ_ONLY:
        raise ValueError(f"{edit.site} can be read, not changed: {READ_ONLY[edit.site]}.")
    if edit.op not in OPS:
        raise ValueError(f"There is no operation {edit.op!r}; the operations are {', '.join(OPS)}.")
    if (edit.value is None) != (edit.op == "zero"):
        raise ValueError(f"{edit.op} {'takes no' if edit.op == 'zero' else 'needs a'} value.")
    axes = SITES[edit.site]
    if edit.heads is not None and not ({"h", "g"} & set(axes)):
        raise ValueError(f"{edit.site} is not per head: give heads only for q, k, v, pattern, z or result.")
    if "g" in axes:
        what = f"Key/value heads of {edit.site} (counted apart from the {shape.heads} query heads)"
        _indices(what, edit.heads, shape.kv_heads)
    else:
        _indices("Heads", edit.heads, shape.heads)
    if tokens is not None and not isinstance(edit.positions, slice):
        _indices("Positions", edit.positions, tokens)
    if edit.row is not None:
        if "b" not in axes:
            raise ValueError(f"{edit.site} is the same for every row: give no row.")
        if rows is not None:
            _indices("Rows", edit.row, rows)


def apply(edit: Edit, x: Any, start: int = 0) -> Any:
    """``x`` with ``edit`` done where its cells select (a new tensor); ``x``'s positions are the
    text's from ``start`` on."""
    import torch

    mask = torch.ones((), dtype=torch.bool, device=x.device) if edit.where is None else edit.where
    chosen = {"b": edit.row, "p": edit.positions, "h": edit.heads, "g": edit.heads}
    for dim, axis in enumerate(SITES[edit.site]):
        picked = chosen.get(axis)
        if picked is None:
            continue
        if axis == "p":
            size = start + x.shape[dim]
            picked = torch.arange(size)[picked] if isinstance(picked, slice) else torch.as_tensor(picked)
            along = torch.isin(torch.arange(start, start + x.shape[dim]), picked).to(x.device)
        else:
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
        "remove": lambda: x - (x @ value)[..., None] * value / (value @ value),
    }[edit.op]()
    return torch.where(mask, new, x)


def tl_row(site: str, layer: int, head: int | None = None, **more: int) -> dict:
    """A row of a command's JSON as TransformerLens names it, every index from 0 (the text's
    labels count from 1): {"hook": "blocks.3.attn.hook_z", "layer": 3, "head": 1}."""
    row = {"hook": TL_HOOKS[site].format(layer=layer), "layer": layer}
    return row | ({} if head is None else {"head": head}) | more
