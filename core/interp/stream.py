"""The residual stream of one token: how it grows layer by layer, and the final stream as a sum of
what each part wrote into it.

    journey = stream_journey(model, ids, position)   # model: a LoadedModel decoder, ids (T,)
    journey.rows[l].norm_in, .norm_out, .attn_norm, .mlp_norm, .cos_final, .lens_top
    journey.parts                                    # (P, hidden): embeddings, L1 attn, L1 MLP, …
    journey.sum_error                                # max |Σ parts − the final stream|
    effects = direct_effects(model, journey)         # (P + 1, K): each part's push on the top logits
    grouped(journey, effects, "layer").values        # (layers + 2, K): summed by block (or "kind")
    step = norm_step(model, ids, position, layer)    # the norm block ``layer`` reads through,
    step.mean_square, step.scale, step.gain, step.output   # written out (layer = layers: the final)

Every block adds what its attention and its MLP write (Gemma 2 and 3 normalise each first; GPT-NeoX
adds both to the same input), so the stream leaving the last block is the embeddings plus every
part. The numbers come from one hooked run (``core.decoder.run``); the lens's top token after
each layer from ``core.interp.lens``. Layers are 0-based in code; part names count from 1.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from core.decoder.adapter import adapter_of
from core.decoder.run import hooked_run
from core.interp.head.parts import frozen_norm
from core.interp.head.writes import direct_logits
from core.interp.lens import read_streams

__all__ = [
    "GROUPS", "DirectEffects", "LayerRow", "NormStep", "PartGroups", "StreamJourney", "check_position",
    "direct_effects", "grouped", "norm_step", "stream_journey",
]  # fmt: skip
SCALED = 10.0  # the stream times this reads the same through a norm
TOP = 5  # tokens the final norm's step names


@dataclass(frozen=True)
class LayerRow:
    """One block as the chosen token passes it: the sizes (Euclidean norms) of what goes in and out."""

    norm_in: float  # the stream entering the block
    norm_out: float  # the stream leaving it
    attn_norm: float  # what attention adds to the stream
    mlp_norm: float  # what the MLP adds
    cos_final: float  # cosine of the stream leaving the block with the final stream
    lens_top: int  # the token the logit lens reads after the block


@dataclass(frozen=True)
class StreamJourney:
    """The chosen token's stream through every block, and the final stream split into its parts."""

    position: int  # 0-based
    rows: tuple[LayerRow, ...]  # (layers,)
    names: tuple[str, ...]  # (P,) "embeddings", "L1 attn", "L1 MLP", …
    parts: np.ndarray  # (P, hidden) float64: what each part added at the position
    final: np.ndarray  # (hidden,) float64: the stream leaving the last block

    @property
    def sum_error(self) -> float:
        """The largest difference between the sum of the parts and the real final stream."""
        return float(np.abs(self.parts.sum(0) - self.final).max())


def check_position(position: int, length: int) -> int:
    """``position`` (0-based; negative counts from the end); ValueError naming the range otherwise."""
    if not -length <= position < length:
        raise ValueError(f"Position {position} does not exist: the text has positions 0 to {length - 1}.")
    return position % length


def stream_journey(model: Any, ids: Sequence[int], position: int = -1) -> StreamJourney:
    """The stream of token ``position`` of ``ids`` through every block of ``model``, from one run."""
    import torch

    position = check_position(position, len(ids))
    adapter = adapter_of(model.module)
    layers = adapter.shape.layers
    out = hooked_run(model, ids, cache=["resid_pre", "attn_out", "mlp_out", "resid_post"], unembed=False)

    def at(site: str, layer: int) -> Any:
        return out.cache[site, layer][0, position]

    with torch.inference_mode():
        added = {
            (part, layer): at(f"{part}_out", layer).double()
            for layer in range(layers)
            for part in ("attn", "mlp")
        }
        streams = torch.stack([at("resid_post", layer) for layer in range(layers)])  # (layers, hidden)
        tops = read_streams(model, streams[:, None]).top_ids[:, 0]
    final = streams[-1].double()
    rows = tuple(
        LayerRow(
            norm_in=float(at("resid_pre", layer).double().norm()),
            norm_out=float(streams[layer].double().norm()),
            attn_norm=float(added["attn", layer].norm()),
            mlp_norm=float(added["mlp", layer].norm()),
            cos_final=float(torch.nn.functional.cosine_similarity(streams[layer].double(), final, dim=0)),
            lens_top=int(tops[layer]),
        )
        for layer in range(layers)
    )
    names = ["embeddings"] + [f"L{n + 1} {p}" for n in range(layers) for p in ("attn", "MLP")]
    parts = [at("resid_pre", 0).double()] + [added[p, n] for n in range(layers) for p in ("attn", "mlp")]
    return StreamJourney(position, rows, tuple(names), torch.stack(parts).numpy(), final.numpy())


@dataclass(frozen=True)
class DirectEffects:
    """What each part of the final stream adds straight to some tokens' logits, through the final
    norm with its scale frozen at this run's value; the rows add up to the logits (before a cap)."""

    names: tuple[str, ...]  # (P + 1,) the journey's parts, then "biases"
    tokens: tuple[int, ...]  # (K,)
    values: np.ndarray  # (P + 1, K) float64
    logits: np.ndarray  # (K,) the model's logits of the tokens before any final cap
    note: str  # the final cap, if the model has one, or ""


def direct_effects(model: Any, journey: StreamJourney, tokens: Sequence[int] = ()) -> DirectEffects:
    """Each part of ``journey``'s final stream through the final norm (scale frozen) and the
    unembedding rows of ``tokens`` (none given: the TOP most likely); the norm's and the
    unembedding's biases as one more row."""
    import torch

    adapter = adapter_of(model.module)
    final = torch.as_tensor(journey.final).float()
    if not len(tokens):
        with torch.inference_mode():
            tokens = adapter.readout(final[None])[0].topk(TOP).indices.tolist()
    tokens = [int(t) for t in tokens]
    direct = direct_logits(adapter, journey.parts, final, tokens)
    bias = sum(direct.biases.values(), torch.zeros(len(tokens), dtype=torch.float64))
    note = f"{direct.cap}: the parts add up to the logits before the cap." if direct.cap else ""
    values = torch.cat([direct.values, bias[None]]).numpy()
    return DirectEffects((*journey.names, "biases"), tuple(tokens), values, direct.logits.numpy(), note)


GROUPS = ("part", "layer", "kind")  # how ``grouped`` gathers the parts


@dataclass(frozen=True)
class PartGroups:
    """The final stream's parts gathered into groups, with the biases row last."""

    names: tuple[str, ...]  # (G,) e.g. "embeddings", "L1", …, "biases"
    norms: np.ndarray  # (G,) the size of each group's summed vector (NaN for the biases)
    values: np.ndarray  # (G, K) each group's direct effect on the tokens


def grouped(journey: StreamJourney, effects: DirectEffects, by: str = "part") -> PartGroups:
    """``effects`` and the parts' vectors summed by ``by``: "part" (each alone), "layer" (a
    block's attention and MLP together) or "kind" (every attention output, every MLP output)."""
    if by not in GROUPS:
        raise ValueError(f"Unknown grouping {by!r}; choose one of {', '.join(GROUPS)}.")

    def group(name: str) -> str:
        if by == "part" or name == "embeddings":
            return name
        layer, kind = name.split(" ")
        return layer if by == "layer" else {"attn": "attention", "MLP": "MLPs"}[kind]

    names = tuple(dict.fromkeys(group(n) for n in journey.names))
    members = [[k for k, n in enumerate(journey.names) if group(n) == g] for g in names]
    norms = [np.linalg.norm(journey.parts[m].sum(0)) for m in members]
    values = [effects.values[m].sum(0) for m in members] + [effects.values[-1]]
    return PartGroups((*names, "biases"), np.array([*norms, np.nan]), np.array(values))


@dataclass(frozen=True)
class NormStep:
    """A norm written out on the stream it reads at one position (hidden-sized arrays, float64)."""

    layer: int  # 0-based: the block whose attention reads through it; = layers: the final norm
    kind: str  # "RMSNorm" or "LayerNorm" (which subtracts the mean first)
    stream: np.ndarray  # (hidden,) what it reads
    mean: float  # the stream's mean, subtracted by LayerNorm (RMSNorm leaves it)
    mean_square: float  # of the stream, centred for LayerNorm
    eps: float  # added before the square root
    gain: np.ndarray  # (hidden,) the learned gain (Gemma's 1 + weight)
    bias: np.ndarray | None  # (hidden,) LayerNorm's bias
    output: np.ndarray  # (hidden,) gain × stream / √(mean square + eps) (+ bias)
    module_error: float  # max |output − the model's own norm module's output|
    scaled_change: float  # max |the norm of SCALED × stream − the norm of the stream|
    top: tuple[tuple[int, float], ...]  # the final norm only: (token, logit) of the TOP largest

    @property
    def scale(self) -> float:
        """1 / √(mean square + eps): what the stream is multiplied by before the gain."""
        return (self.mean_square + self.eps) ** -0.5


def norm_step(model: Any, ids: Sequence[int], position: int, layer: int) -> NormStep:
    """The norm block ``layer`` (0-based) of ``model`` reads the stream through, or with ``layer``
    = the number of layers the final norm before the unembedding, on token ``position`` of ``ids``,
    from one run; the written-out output checked against the model's own norm."""
    import torch

    position = check_position(position, len(ids))
    adapter = adapter_of(model.module)
    layers = adapter.shape.layers
    if not 0 <= layer <= layers:
        raise ValueError(f"Layer {layer + 1} does not exist: this model has layers 1 to {layers}.")
    final = layer == layers
    site = ("final_in", None) if final else ("resid_pre", layer)
    out = hooked_run(model, ids, cache=[site], unembed=final)
    x = out.cache[site][0, position]
    norm = adapter.final_norm if final else adapter.pre_norm(layer)
    frozen = frozen_norm(norm, x)  # checked against the module's own output
    x64 = x.double()
    output = frozen(x64) + (0 if frozen.bias is None else frozen.bias)
    top: tuple[tuple[int, float], ...] = ()
    with torch.inference_mode():
        own = norm(x[None])[0].double()
        scaled = norm((SCALED * x)[None])[0].double()
        if final:
            values, tokens = out.logits[0, position].topk(TOP)
            top = tuple((int(t), float(v)) for t, v in zip(tokens, values, strict=True))
    return NormStep(
        layer=layer,
        kind="LayerNorm" if frozen.centre else "RMSNorm",
        stream=x64.numpy(),
        mean=float(x64.mean()),
        mean_square=frozen.scale**-2 - frozen.eps,
        eps=frozen.eps,
        gain=frozen.gain.numpy(),
        bias=None if frozen.bias is None else frozen.bias.numpy(),
        output=output.numpy(),
        module_error=float((output - own).abs().max()),
        scaled_change=float((scaled - own).abs().max()),
        top=top,
    )
