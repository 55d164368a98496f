"""Attention sinks: decoder heads that park most of their weight on the first token.

Softmax makes every row of weights sum to 1, so a head with nothing useful to read must still
put its weight somewhere; trained decoders learn to put it on position 0, which every token can
see. ``sink_scores`` measures this per head; ``without_first_token`` shows what the model
predicts when that token is gone.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from core.interp.ablation import next_token_probs

__all__ = ["FirstTokenDropped", "sink_scores", "without_first_token"]


def sink_scores(attentions: np.ndarray) -> np.ndarray:
    """(layers, heads) mean weight on position 0 over the query rows 1…T−1.

    ``attentions`` (layers, heads, T, T). Row 0 is left out: in a causal model it can only look
    at itself.
    """
    if attentions.shape[-1] < 2:
        raise ValueError("Attention sinks need at least two tokens; type a longer text.")
    return attentions[:, :, 1:, 0].astype(np.float64).mean(axis=-1)


@dataclass(frozen=True)
class FirstTokenDropped:
    """The next-token distribution with and without the prompt's first token."""

    full: np.ndarray  # (vocab,) probabilities after the whole prompt
    dropped: np.ndarray  # (vocab,) probabilities after the prompt without its first token

    def top(self, k: int = 5) -> tuple[np.ndarray, np.ndarray]:
        """The ``k`` most likely token ids (k,) with the whole prompt and without its first token."""
        return np.argsort(-self.full)[:k], np.argsort(-self.dropped)[:k]

    def total_variation(self) -> float:
        """Half the summed absolute change of the probabilities: 0 = same, 1 = disjoint."""
        return float(0.5 * np.abs(self.full - self.dropped).sum())


def without_first_token(model: Any, ids: Sequence[int]) -> FirstTokenDropped:
    """Predict after ``ids`` (T,) and after ``ids[1:]``; ValueError when T < 2."""
    ids = list(ids)
    if len(ids) < 2:
        raise ValueError("Dropping the first token needs a prompt of at least two tokens.")
    return FirstTokenDropped(next_token_probs(model, ids), next_token_probs(model, ids[1:]))
