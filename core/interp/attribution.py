"""Attribution patching: every cell of every patching grid from two forward passes (one per prompt)
and one backward pass.

Patching an activation a from its receiving value a_r to its source value a_s changes the
metric m by about (a_s − a_r) · ∂m/∂a, the gradient taken in the receiving run. So one run with
gradients gives an estimate for every cell at once:

    approx = attribute(model, pair)                    # pair from core.interp.patching.prepare
    approx.grid("resid").values                        # (layers + 1, T), normalised as patch()'s

A head's keys and values are shared by the query heads of its group: the gradient of one query
head's key is taken through that head's weights alone, of its value through its output alone,
so each estimate stands for patching that query head only, as ``core.interp.patching`` does.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from core.decoder.adapter import adapter_of
from core.decoder.run import hooked_run
from core.interp.patching import (
    HEAD_PART_SITES,
    Grid,
    PatchPair,
    check_direction,
    check_ends,
    check_head,
    labels,
    metric_of,
    record,
)
from core.interp.patching_cells import by_site, run_sites


@dataclass(frozen=True)
class Attribution:
    """Each cell's estimated metric: per site (layers[+1], T) or per head site (layers, heads, T)."""

    pair: PatchPair
    direction: str
    shape: Any  # core.decoder.DecoderShape
    clean: float
    corrupt: float
    receiving: float  # the metric of the run the gradient was taken in
    by_position: dict[str, np.ndarray]  # site -> estimated change of the metric per cell

    def grid(self, what: str, head: tuple[int, int] | None = None) -> Grid:
        """The estimate of ``core.interp.patching.patch(…, what, head=head)``'s grid."""
        d = self.by_position
        if what in ("resid", "attn", "mlp"):
            change = d[what]
        elif what in ("heads", "q", "k", "v", "pattern"):
            change = d["z" if what == "heads" else what].sum(axis=-1)
        elif what == "heads_pos":
            change = d["z"].reshape(-1, self.pair.length)
        elif what == "head":
            layer, one = check_head(self.shape, head)
            change = np.stack([d[site][layer, one] for site in HEAD_PART_SITES])
        else:
            return Grid(what, self.direction, (), (), np.zeros((0, 0)), self.clean, self.corrupt)
        rows, columns = labels(self.pair, self.shape, what)
        raw = self.receiving + change
        return Grid(
            what, self.direction, rows, columns, raw, self.clean, self.corrupt, approx=True,
            head=head if what == "head" else None,
        )  # fmt: skip


def attribute(model: Any, pair: PatchPair, direction: str = "denoise") -> Attribution:
    """(source − receiving activation) · ∂metric/∂activation for every cell of every grid of
    ``model`` (a LoadedModel)."""
    import torch

    check_direction(direction)
    adapter = adapter_of(model.module)
    shape = adapter.shape
    metric = metric_of(adapter, pair)
    denoise = direction == "denoise"
    source, m_source = record(model, pair.clean if denoise else pair.corrupt, metric)
    sites = run_sites(shape.layers)
    out = hooked_run(
        model, pair.corrupt if denoise else pair.clean, cache=sites,
        grads=[site for site in sites if site not in ("k", "v")], retain=True, unembed=False,
        metric=lambda normed: metric(normed[:, -1].float())[0],
    )  # fmt: skip
    m_clean, m_corrupt = (m_source, out.metric) if denoise else (out.metric, m_source)
    check_ends(m_clean, m_corrupt)
    acts, grad = by_site(out.live, shape.layers), by_site(out.grads, shape.layers)
    grad["k"] = {layer: _key_grads(acts, grad, layer, shape) for layer in range(shape.layers)}
    grad["v"] = {layer: _value_grads(acts, grad, layer) for layer in range(shape.layers)}
    kv = torch.arange(shape.heads) // (shape.heads // shape.kv_heads)  # each query head's k/v head
    by_position = {}
    with torch.no_grad():
        for site in ("resid", "attn", "mlp", "z", "q", "k", "v", "pattern"):
            rows = []
            for layer in sorted(acts[site]):
                s, r = source[site][layer][0], acts[site][layer][0]
                g = grad[site][layer] if site in ("k", "v") else grad[site][layer][0]
                if site in ("q", "k", "v"):  # (T, heads, d) -> (heads, T, d), as k's and v's gradients are
                    s, r = s.transpose(0, 1), r.transpose(0, 1)
                    g = g.transpose(0, 1) if site == "q" else g
                if site in ("k", "v"):
                    s, r = s[kv], r[kv]
                change = _dot(s, r, g, -1)  # (T,), (T, heads) for z, else (heads, T)
                rows.append((change.T if site == "z" else change).numpy())
            by_position[site] = np.stack(rows)
    receiving = m_corrupt if direction == "denoise" else m_clean
    return Attribution(pair, direction, shape, m_clean, m_corrupt, receiving, by_position)


def _dot(source: Any, receiving: Any, gradient: Any, axis: int) -> Any:
    """Σ over ``axis`` of (source − receiving) · gradient, in float32."""
    return ((source.float() - receiving.detach().float()) * gradient.float()).sum(axis)


def _key_grads(acts: dict, grad: dict, layer: int, shape: Any) -> Any:
    """(heads, T, d): ∂m/∂k of each query head's key/value head, through that head's weights alone."""
    import torch

    k, w, gw = acts["k"][layer], acts["pattern"][layer], grad["pattern"][layer]
    heads = torch.arange(shape.heads)
    only = torch.zeros((shape.heads, *gw.shape), dtype=gw.dtype)  # one head's gradient per row
    only[heads, :, heads] = gw[:, heads].transpose(0, 1)
    (gk,) = torch.autograd.grad(w, k, grad_outputs=only, retain_graph=True, is_grads_batched=True)
    return gk[heads, 0, :, heads // (shape.heads // shape.kv_heads)]  # (heads, T, d)


def _value_grads(acts: dict, grad: dict, layer: int) -> Any:
    """(heads, T, d): z_h = W_h v_g, so ∂m/∂v_g through head h alone is W_hᵀ ∂m/∂z_h."""
    w, gz = acts["pattern"][layer][0].detach().float(), grad["z"][layer][0].float()  # (H, T, T), (T, H, d)
    return w.transpose(1, 2) @ gz.transpose(0, 1)
