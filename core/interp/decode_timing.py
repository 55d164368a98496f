"""One decode step timed with the KV cache and without it, side by side."""

from __future__ import annotations

import statistics
import time
from dataclasses import dataclass

from core.decoder.run import cache_keywords
from core.interp.prediction import context_limit
from core.models.kinds import LoadedModel


@dataclass(frozen=True)
class DecodeTiming:
    """Median seconds to get the next token's logits at ``tokens`` tokens."""

    tokens: int
    cached: float  # one new token against the cache of the others
    uncached: float  # the whole sequence run again

    @property
    def speedup(self) -> float:
        return self.uncached / self.cached


def time_decode(model: LoadedModel, ids, tokens: int, repeats: int = 5) -> DecodeTiming:
    """Measure one decode step at ``tokens`` tokens with and without the cache, side by side.

    The token ids ``ids`` are repeated or cut to exactly ``tokens``; each repeat times a cached
    step (the cache cut back afterwards) and then a full uncached forward pass.
    """
    import torch

    ids = [int(i) for i in ids]
    if not ids:
        raise ValueError("Time a decode step on at least one token.")
    tokens = max(2, min(tokens, context_limit(model)))
    ids = (ids * (tokens // len(ids) + 1))[:tokens]
    cached, uncached = [], []
    with torch.inference_mode():
        cache = model.module(input_ids=torch.tensor([ids[:-1]]), use_cache=True).past_key_values
        last, everything = torch.tensor([ids[-1:]]), torch.tensor([ids])
        for _ in range(repeats):
            start = time.perf_counter()
            model.module(input_ids=last, **cache_keywords(model.module, cache))
            cached.append(time.perf_counter() - start)
            cache.crop(-1)
            start = time.perf_counter()
            model.module(input_ids=everything, use_cache=False)
            uncached.append(time.perf_counter() - start)
    return DecodeTiming(tokens, statistics.median(cached), statistics.median(uncached))


__all__ = ["DecodeTiming", "time_decode"]
