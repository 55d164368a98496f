"""The residual stream as a sum of parts, and norms with their scale frozen at one run's value.

    adapter = check_split(rec)             # ValueError for a model not split here, saying why
    parts = stream_parts(adapter, rec, layer, t)   # before block ``layer`` at t (layers: the end)
    parts.vectors.sum(0) ≈ rec.streams[layer, t]   # (P, hidden) float64, names (P,)
    norm = frozen_norm(module, x)          # x (hidden,): the input this norm saw in the run
    norm(parts.vectors) + norm.bias        # exact: the norm of the sum, linear in the parts

Parts: the token embedding (Gemma's already scaled by √hidden), the position embedding
(learned positions), each earlier head's output through its slice of the output projection
("L1 H2"), each earlier MLP's output ("L1 MLP"), and the attention output biases ("attention
biases"). Gemma 2 and 3 put a norm after attention and after the MLP: the one after attention is
frozen at the whole attention output it saw, so each head's part goes through it linearly.
Parallel blocks (GPT-NeoX) add the same two outputs, so their stream splits the same way.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from core.decoder.edges import norm_gain
from core.interp.head.record import Recorded

TOLERANCE = 1e-4  # relative: parts that do not rebuild the real vector mean a family not handled


def check_split(rec: Recorded) -> Any:
    """The model's adapter when steps 2–4 can split it; ValueError saying why not otherwise."""
    if rec.streams is None:
        raise ValueError(
            "Steps 2–4 need a decoder (its residual stream and its unembedding); this model is an "
            "encoder. Step 1 works on it; load a decoder such as SmolLM2 for the rest."
        )
    from core.decoder.adapter import adapter_of

    return adapter_of(rec.module)


def check_close(rebuilt: Any, real: Any, what: str) -> None:
    """ValueError when a sum of parts does not rebuild the real vector (relative TOLERANCE)."""
    rebuilt, real = np.asarray(rebuilt, dtype=np.float64), np.asarray(real, dtype=np.float64)
    if np.abs(rebuilt - real).max() > TOLERANCE * max(np.abs(real).max(), 1e-6):
        raise ValueError(f"The parts do not add up to the real {what} for this model; it is not split here.")


@dataclass(frozen=True)
class Parts:
    names: tuple[str, ...]  # (P,)
    vectors: Any  # (P, hidden) torch float64


def _out_bias(adapter: Any, layer: int) -> Any:
    """(hidden,) float64 bias of ``layer``'s attention output projection, or None."""
    bias = getattr(adapter.out_proj(layer), "bias", None)
    return None if bias is None else bias.detach().double()


def _head_outputs(adapter: Any, rec: Recorded, layer: int, t: int) -> Any:
    """(heads, hidden) float64: each head's z at t through its slice of the output projection."""
    import torch

    shape = adapter.shape
    weight = adapter.out_weight(layer).detach().double().reshape(shape.hidden, shape.heads, shape.head_dim)
    return torch.einsum("hd,nhd->hn", rec.z[layer][t].double(), weight)


def after_attention(adapter: Any, rec: Recorded, layer: int, t: int) -> Any:
    """(…, hidden) -> (…, hidden): what ``layer``'s attention output at t goes through before the
    stream; Gemma 2 and 3's norm after attention frozen at the output it saw, else nothing."""
    norm = adapter.after_norm(layer, "attn")
    if norm is None:
        return lambda x: x
    bias = _out_bias(adapter, layer)
    seen = _head_outputs(adapter, rec, layer, t).sum(0) + (0 if bias is None else bias)
    return frozen_norm(norm, seen)


def head_writes(adapter: Any, rec: Recorded, layer: int, t: int) -> Any:
    """(heads, hidden) float64: what each head of ``layer`` adds to the stream at position t."""
    return after_attention(adapter, rec, layer, t)(_head_outputs(adapter, rec, layer, t))


def mlp_writes(rec: Recorded, layer: int, t: int) -> Any:
    """(hidden,) float64: what the MLP of ``layer`` adds to the stream at t."""
    return rec.mlp[layer, t].double()


def stream_parts(adapter: Any, rec: Recorded, layer: int, t: int) -> Parts:
    """The residual stream before block ``layer`` at position ``t`` as its parts (checked to add up)."""
    import torch

    with torch.inference_mode():
        token = adapter.module.get_input_embeddings()(torch.tensor([rec.ids[t]]))[0].double()
        names, vectors = ["token embedding"], [token[None]]
        if adapter.family.positions == "learned":  # the input of block 0 is token + position
            names.append("position embedding")
            vectors.append((rec.streams[0, t].double() - token)[None])
        biases = torch.zeros_like(token)
        for earlier in range(layer):
            names += [f"L{earlier + 1} H{h + 1}" for h in range(rec.heads)] + [f"L{earlier + 1} MLP"]
            vectors += [head_writes(adapter, rec, earlier, t), mlp_writes(rec, earlier, t)[None]]
            bias = _out_bias(adapter, earlier)
            if bias is not None:
                biases += after_attention(adapter, rec, earlier, t)(bias)
        if layer and _out_bias(adapter, 0) is not None:
            names.append("attention biases")
            vectors.append(biases[None])
        parts = Parts(tuple(names), torch.cat(vectors))
    check_close(parts.vectors.sum(0), rec.streams[layer, t], "residual stream")
    return parts


@dataclass(frozen=True)
class FrozenNorm:
    """A norm with its scale frozen at one position's value: linear in what it is given."""

    gain: Any  # (hidden,) torch float64: the weight, or Gemma's 1 + weight
    scale: float  # 1/rms (RMSNorm) or 1/std (LayerNorm) of the input it saw
    centre: bool  # LayerNorm subtracts the mean first (linear too)
    bias: Any  # (hidden,) torch float64 or None: LayerNorm's β, added once, not per part
    eps: float  # added to the mean square before the square root

    def __call__(self, parts: Any) -> Any:
        """(…, hidden) -> (…, hidden), without the bias."""
        if self.centre:
            parts = parts - parts.mean(-1, keepdim=True)
        return parts * (self.scale * self.gain)


def frozen_norm(norm: Any, x: Any) -> FrozenNorm:
    """``norm`` (RMSNorm or LayerNorm module) frozen at the input ``x`` (hidden,) it saw; checked to
    give the module's own output for ``x``."""
    import torch

    x = torch.as_tensor(x).double()
    if isinstance(norm, torch.nn.LayerNorm):
        centred = x - x.mean()
        bias = None if norm.bias is None else norm.bias.detach().double()
        scale = float((centred.pow(2).mean() + norm.eps) ** -0.5)
        frozen = FrozenNorm(norm.weight.detach().double(), scale, True, bias, norm.eps)
    else:
        gain, eps = norm_gain(norm)
        frozen = FrozenNorm(gain, float((x.pow(2).mean() + eps) ** -0.5), False, None, eps)
    with torch.inference_mode():
        real = norm(x.to(norm.weight.dtype)[None])[0]
    mine = frozen(x) + (0 if frozen.bias is None else frozen.bias)
    check_close(mine, real, f"output of {type(norm).__name__}")
    return frozen
