"""The logit lens: read the prediction after every layer, not only after the last one.

    lens = logit_lens(model, ids, target_id=5099)   # model: a LoadedModel decoder
    lens.top_ids.shape       # (layers, T): the most likely next token read after each layer
    lens.target_rank         # (layers,): where the target stands at the last position (1 = top)

After layer l the residual stream is passed through the model's final norm and unembedding, as
if the remaining layers did nothing. The last row equals the model's real prediction.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from core.decoder.adapter import adapter_of
from core.decoder.run import hooked_run

__all__ = ["LogitLens", "logit_lens", "read_streams", "streams_of", "with_target"]

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


def logit_lens(model: Any, ids: Sequence[int], target_id: int | None = None) -> LogitLens:
    """Apply the final norm and unembedding to the residual stream after every layer.

    ``ids`` (T,) token ids; ``target_id`` adds its rank and probability at the last position.
    Hooks installed by ``core.interp.ablation.ablated`` act on the run like on any other.
    """
    _check(model, target_id)  # before the forward pass
    return read_streams(model, streams_of(model, ids), target_id)


def streams_of(model: Any, ids: Sequence[int]) -> Any:
    """(layers, T, hidden) torch: the residual stream after every layer, from one hooked run."""
    import torch

    run = hooked_run(model, ids, cache=["resid_post"], unembed=False)
    return torch.stack([run.cache["resid_post", layer][0] for layer in range(model.n_layers)])


def read_streams(model: Any, streams: Any, target_id: int | None = None) -> LogitLens:
    """The lens of residual streams already recorded: ``streams`` (layers, T, hidden) torch, the
    output of every layer during one forward pass (``streams_of``).

    Every (layer, position) row goes through the norm and unembedding in one matrix product
    (per ``CHUNK_ROWS`` rows) written into one reused buffer, where the softmax's normaliser is
    taken in place: the top token's probability is 1 / Σ exp(logit − top logit), the target's
    rank counts the logits above its own.
    """
    import torch

    _check(model, target_id)
    adapter = adapter_of(model.module)
    layers, t, hidden = streams.shape
    rows = layers * t
    with torch.inference_mode():
        weight = adapter.unembed.weight.float()  # (vocab, hidden)
        bias = adapter.unembed.bias
        normed = adapter.final_norm(streams.reshape(rows, hidden)).float()  # (L · T, hidden)
        buffer = torch.empty(min(CHUNK_ROWS, rows), weight.shape[0])
        top_ids = torch.empty(rows, dtype=torch.long)
        best = torch.empty(rows)  # the top logit per row
        totals = torch.empty(rows)  # Σ exp(logit − top logit) per row, ≥ 1: the top token's own term
        mine = torch.empty(layers)  # the target's logit at the last position, per layer
        rank = torch.empty(layers, dtype=torch.long)
        ends = torch.arange(t - 1, rows, t)  # each layer's row at the last position
        for start in range(0, rows, CHUNK_ROWS):
            stop = min(start + CHUNK_ROWS, rows)
            logits = torch.matmul(normed[start:stop], weight.T, out=buffer[: stop - start])
            if bias is not None:
                logits.add_(bias.float())
            if adapter.softcap:
                logits.div_(adapter.softcap).tanh_().mul_(adapter.softcap)
            torch.max(logits, dim=-1, out=(best[start:stop], top_ids[start:stop]))
            if target_id is not None:
                last = ends[(ends >= start) & (ends < stop)]
                mine[last // t], rank[last // t] = _standing(logits[last - start], target_id)
            torch.sum(logits.sub_(best[start:stop, None]).exp_(), dim=-1, out=totals[start:stop])
        top_probs = (1.0 / totals).reshape(layers, t).double().numpy()
        if target_id is None:
            return LogitLens(top_ids.reshape(layers, t).numpy(), top_probs, None, None, None)
        log_z = best.reshape(layers, t)[:, -1] + torch.log(totals.reshape(layers, t)[:, -1])
        prob = torch.exp(mine - log_z).double().numpy()
    return LogitLens(top_ids.reshape(layers, t).numpy(), top_probs, target_id, rank.numpy(), prob)


def with_target(model: Any, streams: Any, lens: LogitLens, target_id: int | None) -> LogitLens:
    """``lens`` (of ``streams``, (layers, T, hidden) torch) with the rank and probability of
    ``target_id`` instead of its own target's (None: without one). Reads only the last position's
    rows, one per layer: a new target costs a 30th of a whole lens."""
    import torch

    _check(model, target_id)
    if target_id is None:
        return replace(lens, target_id=None, target_rank=None, target_prob=None)
    with torch.inference_mode():
        logits = adapter_of(model.module).readout(streams[:, -1]).float()  # (layers, vocab)
        mine, rank = _standing(logits, target_id)
        prob = torch.exp(mine - torch.logsumexp(logits, dim=-1)).double().numpy()
    return replace(lens, target_id=target_id, target_rank=rank.numpy(), target_prob=prob)


def _standing(logits: Any, target_id: int) -> tuple[Any, Any]:
    """(the target's logit, its rank, 1 = top) in each row of ``logits`` (rows, vocab) torch."""
    mine = logits[:, target_id]
    return mine, (logits > mine[:, None]).sum(dim=-1) + 1


def _check(model: Any, target_id: int | None) -> None:
    """ValueError when ``model`` is not a supported decoder or ``target_id`` is not a token."""
    vocab = adapter_of(model.module).shape.vocab
    if target_id is not None and not 0 <= target_id < vocab:
        raise ValueError(f"Token id {target_id} is outside the vocabulary (0–{vocab - 1}).")
