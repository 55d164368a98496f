"""One forward pass with everything the "Inside a head" steps read, kept as torch tensors.

    rec = record(model, ids)            # model: a core.models.LoadedModel, ids: token ids (T,)
    rec.q[l]                            # (heads, T, d) queries after rotary, as the softmax sees them
    rec.streams[l]                      # (T, hidden) the stream before block l (l = layers: the end)

A decoder is read by one hooked run (``core.decoder.run``); an encoder (MiniLM) is switched to
the same tapped attention, so step 1 works on it too (``streams`` and ``mlp`` are then None).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from core.decoder.encoder import encoder_heads

HEAD_SITES = ("q", "k", "v", "z", "pattern")  # the run's sites kept per layer, first batch row


@dataclass(frozen=True)
class Recorded:
    """The first batch row of one run; layers are 0-based."""

    module: Any
    ids: tuple[int, ...]
    causal: bool
    q: list  # [layer] (heads, T, d) after rotary
    k: list  # [layer] (kv_heads, T, d) after rotary
    v: list  # [layer] (kv_heads, T, d)
    z: list  # [layer] (T, heads, d) each head's output before the output projection
    weights: list  # [layer] (heads, T, T)
    scaling: list  # [layer] float: what q·k is multiplied by before the softmax
    caps: list  # [layer] float or None: c in c·tanh(score/c), Gemma 2's soft cap on the scores
    windows: list  # [layer] int or None: the sliding window a query sees (itself and w − 1 back)
    rotary: list  # [layer] (cos, sin) each (T, rotary dims), or None without rotary
    streams: Any = None  # (layers + 1, T, hidden) decoders only
    mlp: Any = None  # (layers, T, hidden) each MLP's output, decoders only

    @property
    def layers(self) -> int:
        return len(self.q)

    @property
    def heads(self) -> int:
        return self.q[0].shape[0]

    def kv_head(self, head: int) -> int:
        """The key/value head that query head ``head`` reads (grouped-query attention)."""
        return head // (self.heads // self.k[0].shape[0])


def record(model: Any, ids: Any) -> Recorded:
    """Run ``model`` (a LoadedModel) over ``ids`` once and keep every layer's q, k, v, head outputs and
    weights; for a decoder also the residual streams and MLP outputs."""
    import torch

    from core.models.kinds import DECODER

    module = model.module
    tokens = torch.as_tensor([list(ids)], dtype=torch.long)
    if tokens.shape[1] == 0:
        raise ValueError("Type some text first: the model needs at least one token.")
    if model.kind != DECODER:
        seen, scaling, caps = encoder_heads(model, tokens)
        layers = len(scaling)
        rows = {site: [seen[site, n][0].float() for n in range(layers)] for site in HEAD_SITES}
        return _recorded(model, ids, rows, [None] * layers, scaling, caps, [None] * layers)
    from core.decoder.adapter import adapter_of
    from core.decoder.run import hooked_run

    adapter = adapter_of(module)
    layers = adapter.shape.layers
    rotary = adapter.family.positions == "rotary"
    sites = [*HEAD_SITES, "resid_pre", "mlp_out", ("resid_post", layers - 1), *(["rotary"] * rotary)]
    cache = hooked_run(model, tokens, cache=sites, unembed=False).cache
    rows = {
        site: [_heads_first(site, cache[site, n][0]).float() for n in range(layers)] for site in HEAD_SITES
    }
    streams = [cache["resid_pre", n][0] for n in range(layers)] + [cache["resid_post", layers - 1][0]]
    rotations = [tuple(cache["rotary", n][:, 0].float()) if rotary else None for n in range(layers)]
    return _recorded(
        model, ids, rows, rotations,
        [adapter.scaling(n) for n in range(layers)], [adapter.score_cap(n) for n in range(layers)],
        adapter.windows, torch.stack(streams).float(),
        torch.stack([cache["mlp_out", n][0] for n in range(layers)]).float(),
    )  # fmt: skip


def _heads_first(site: str, x: Any) -> Any:
    """A run's q, k or v (T, heads, d) as the taps give them, (heads, T, d); other sites as they are."""
    return x.transpose(0, 1) if site in ("q", "k", "v") else x


def _recorded(model, ids, rows: dict, rotary, scaling, caps, windows, streams=None, mlp=None) -> Recorded:
    return Recorded(
        module=model.module,
        ids=tuple(int(i) for i in ids),
        causal=bool(model.is_causal),
        q=rows["q"],
        k=rows["k"],
        v=rows["v"],
        z=rows["z"],
        weights=rows["pattern"],
        scaling=scaling,
        caps=caps,
        windows=windows,
        rotary=rotary,
        streams=streams,
        mlp=mlp,
    )
