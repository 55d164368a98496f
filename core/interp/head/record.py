"""One forward pass with everything the "Inside a head" steps read, kept as torch tensors.

    rec = record(model, ids)            # model: a core.models.LoadedModel, ids: token ids (T,)
    rec.q[l]                            # (heads, T, d) queries after rotary, as the softmax sees them
    rec.streams[l]                      # (T, hidden) the stream before block l (l = layers: the end)

A decoder is read through its adapter and the attention taps; an encoder (MiniLM) is switched to
the same tapped attention, so step 1 works on it too (``streams`` and ``mlp`` are then None).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from core.decoder.hooks import Tap, recording, stacked, tapped, this_thread_only


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


class _Keep(Tap):
    def __init__(self):
        self.qkv_seen, self.heads_seen = {}, {}

    def qkv(self, layer, q, k, v):
        self.qkv_seen[layer] = (q[0].float(), k[0].float(), v[0].float())
        return q, k, v

    def heads(self, layer, z, weights, value):
        self.heads_seen[layer] = (z[0].float(), weights[0].float())
        return z


def _per_layer(module: Any, layers: int, name: str, default: float | None) -> list:
    """Each layer's attention module's float attribute ``name`` (found by its ``layer_idx``), else
    ``default``."""
    found = {
        m.layer_idx: float(getattr(m, name))
        for m in module.modules()
        if isinstance(getattr(m, name, None), float) and isinstance(getattr(m, "layer_idx", None), int)
    }
    return [found.get(layer, default) for layer in range(layers)]


def _use_taps(module: Any) -> None:
    """Run an encoder's attention through the taps, as ``adapter_of`` does for decoders."""
    from core.decoder import adapter, hooks

    if module.config._attn_implementation != hooks.NAME:
        adapter._register()
        adapter._use_attention(module, hooks.NAME)


def record(model: Any, ids: Any) -> Recorded:
    """Run ``model`` (a LoadedModel) over ``ids`` once and keep every layer's q, k, v, head outputs and
    weights; for a decoder also the residual streams and MLP outputs."""
    import torch

    from core.models.kinds import DECODER

    module, keep = model.module, _Keep()
    tokens = torch.as_tensor([list(ids)], dtype=torch.long)
    if tokens.shape[1] == 0:
        raise ValueError("Type some text first: the model needs at least one token.")
    if model.kind != DECODER:
        _use_taps(module)
        with tapped(keep), torch.inference_mode():
            module(input_ids=tokens, attention_mask=torch.ones_like(tokens))
        return _recorded(model, ids, keep, [None] * len(keep.qkv_seen))
    from core.decoder.adapter import adapter_of

    adapter = adapter_of(module)
    rotary: dict[int, Any] = {}

    def keep_rotary(layer):
        def hook(_, args, kwargs):
            cos_sin = kwargs.get("position_embeddings")
            rotary[layer] = None if cos_sin is None else (cos_sin[0][0].float(), cos_sin[1][0].float())

        return this_thread_only(hook)

    attentions = [adapter.attention(layer) for layer in range(adapter.shape.layers)]
    handles = [
        a.register_forward_pre_hook(keep_rotary(n), with_kwargs=True) for n, a in enumerate(attentions)
    ]
    mlps = [adapter.mlp(layer) for layer in range(adapter.shape.layers)]
    try:
        with (
            tapped(keep),
            recording(adapter.blocks, inputs=True) as before,
            recording(adapter.blocks[-1:]) as last,
            recording(mlps) as mlp,
            torch.inference_mode(),
        ):
            adapter.body(input_ids=tokens, use_cache=False)
    finally:
        for handle in handles:
            handle.remove()
    streams = torch.cat([stacked(before), last[0][None]]).float()
    rot = [rotary.get(layer) for layer in range(adapter.shape.layers)]
    return _recorded(model, ids, keep, rot, streams, stacked(mlp).float())


def _recorded(model, ids, keep: _Keep, rotary, streams=None, mlp=None) -> Recorded:
    layers = len(keep.qkv_seen)
    q, k, v = zip(*(keep.qkv_seen[layer] for layer in range(layers)), strict=True)
    z, w = zip(*(keep.heads_seen[layer] for layer in range(layers)), strict=True)
    return Recorded(
        module=model.module,
        ids=tuple(int(i) for i in ids),
        causal=bool(model.is_causal),
        q=list(q),
        k=list(k),
        v=list(v),
        z=list(z),
        weights=list(w),
        scaling=_per_layer(model.module, layers, "scaling", q[0].shape[-1] ** -0.5),
        caps=_per_layer(model.module, layers, "attn_logit_softcapping", None),
        rotary=rotary,
        streams=streams,
        mlp=mlp,
    )
