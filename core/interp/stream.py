"""The residual stream of one token: how it grows layer by layer, and the final stream as a sum of
what each part wrote into it.

    journey = stream_journey(model, ids, position)   # model: a LoadedModel decoder, ids (T,)
    journey.rows[l].norm_in, .norm_out, .attn_norm, .mlp_norm, .cos_final, .lens_top
    journey.parts                                    # (P, hidden): embeddings, L1 attn, L1 MLP, …
    journey.sum_error                                # max |Σ parts − the final stream|

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
from core.interp.lens import read_streams

__all__ = ["LayerRow", "StreamJourney", "check_position", "stream_journey"]


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
            (part, layer): _after(adapter.after_norm(layer, part), at(f"{part}_out", layer)).double()
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


def _after(norm: Any, x: Any) -> Any:
    """``x`` through the norm a family puts on a part's output before the stream (None: as it is)."""
    return x if norm is None else norm(x[None])[0]
