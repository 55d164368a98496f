"""The logit lens: read the prediction after every layer, not only after the last one.

    lens = logit_lens(module, ids, target_id=5099)
    lens.top_ids.shape       # (layers, T): the most likely next token read after each layer
    lens.target_rank         # (layers,): where the target stands at the last position (1 = top)

After layer l the residual stream is passed through the model's final norm and unembedding, as
if the remaining layers did nothing. The last row equals the model's real prediction.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from core.ablation import recorded, shape_of

CHUNK_ROWS = 512  # (layer, position) rows unembedded at once: 512 × vocab floats


@dataclass(frozen=True)
class LogitLens:
    """The next-token prediction read after each layer, at every position."""

    top_ids: np.ndarray  # (layers, T) int: the most likely token read after layer l at position t
    top_probs: np.ndarray  # (layers, T) float64: its probability
    target_id: int | None
    target_rank: np.ndarray | None  # (layers,) int, 1 = top: the target at the last position
    target_prob: np.ndarray | None  # (layers,) float64

    def formed_at(self) -> int | None:
        """The first layer (0-based) from which the target stays the top token, or None."""
        if self.target_rank is None:
            return None
        top = self.target_rank == 1
        if not top[-1]:
            return None
        misses = np.flatnonzero(~top)
        return int(misses[-1] + 1) if misses.size else 0


def logit_lens(module: Any, ids: Sequence[int], target_id: int | None = None) -> LogitLens:
    """Apply the final norm and unembedding to the residual stream after every layer.

    ``ids`` (T,) token ids; ``target_id`` adds its rank and probability at the last position.
    Hooks installed by ``core.ablation.ablated`` act on the run like on any other.
    """
    import torch

    shape = shape_of(module)
    vocab = module.lm_head.out_features
    if target_id is not None and not 0 <= target_id < vocab:
        raise ValueError(f"Token id {target_id} is outside the vocabulary (0–{vocab - 1}).")
    streams = recorded(module, ids, module.model.layers)  # (L, T, hidden): after each layer
    t = streams.shape[1]
    rank = prob = None
    with torch.inference_mode():
        normed = module.model.norm(streams.reshape(-1, streams.shape[-1]))  # (L · T, hidden)
        top_ids, top_probs, last = [], [], []
        for start in range(0, len(normed), CHUNK_ROWS):  # large matrix products, bounded memory
            logits = module.lm_head(normed[start : start + CHUNK_ROWS]).float()
            best, best_ids = logits.max(dim=-1)
            total = torch.exp(logits - best[:, None]).sum(dim=-1)  # ≥ 1: the top token's own term
            log_z = best + torch.log(total)
            top_ids.append(best_ids)
            top_probs.append(1.0 / total)
            if target_id is not None:
                rows = torch.arange(start, start + len(logits))
                at_last = (rows % t) == t - 1
                last.append((logits[at_last], log_z[at_last]))
        top_ids = torch.cat(top_ids).reshape(shape.layers, t).numpy()
        top_probs = torch.cat(top_probs).reshape(shape.layers, t).double().numpy()
        if target_id is not None:
            logits = torch.cat([lg for lg, _ in last])  # (L, vocab) at the last position
            log_z = torch.cat([z for _, z in last])
            mine = logits[:, target_id : target_id + 1]
            rank = ((logits > mine).sum(dim=-1) + 1).numpy()
            prob = torch.exp(mine[:, 0] - log_z).double().numpy()
    return LogitLens(top_ids, top_probs, target_id, rank, prob)
