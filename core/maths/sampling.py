"""From next-token logits to a choice: temperature, top-k, top-p and a seeded draw (NumPy only).

    d = reshape(logits, temperature=0.8, top_k=50, top_p=0.9)   # logits: (V,)
    d.probs        # (V,) softmax(logits / T): the same tempered softmax as attention's
    d.kept         # (V,) True for tokens that survive top-k and top-p
    d.sampling     # (V,) d.probs on the kept tokens, renormalised to sum to 1
    sample(d, np.random.default_rng(0))   # a token id drawn from d.sampling
    draws = Draws(seed=0)                 # one per generation: seeded once, every token after
    token, prob = draws.draw(d)           # the next; each draw takes the stream's next number

As T → 0 the tempered softmax becomes one-hot on the largest logit, so sampling is greedy.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from core.maths.attention import softmax
from core.maths.stats import entropy

__all__ = [
    "Choice", "Distribution", "Draws", "Settings", "pick", "reshape", "sample", "tempered", "top",
    "top_k_mask", "top_p_mask"
]  # fmt: skip

NUCLEUS_CANDIDATES = 256  # tokens sorted first when looking for the top-p set


@dataclass(frozen=True)
class Settings:
    """How the next token is chosen; ``check()`` refuses impossible values with a reason."""

    temperature: float = 1.0
    top_k: int | None = None  # None: no cut
    top_p: float = 1.0

    def check(self) -> Settings:
        if not (np.isfinite(self.temperature) and self.temperature > 0):
            raise ValueError(
                f"Temperature must be above 0 (got {self.temperature:g}); use a small value such "
                "as 0.01 for greedy choice."
            )
        if not (0 < self.top_p <= 1):
            raise ValueError(f"top-p must be in (0, 1] (got {self.top_p:g}); 1 keeps every token.")
        if self.top_k is not None and self.top_k < 1:
            raise ValueError(
                f"top-k must be at least 1 (got {self.top_k}); leave it out to keep every token."
            )
        return self


@dataclass(frozen=True)
class Distribution:
    """The next-token distribution after the temperature, and which tokens the cuts keep."""

    probs: np.ndarray  # (V,) softmax(logits / T)
    kept: np.ndarray  # (V,) bool: survives top-k and top-p
    settings: Settings

    @property
    def sampling(self) -> np.ndarray:
        """(V,) the kept probabilities renormalised: what ``sample`` draws from."""
        p = np.where(self.kept, self.probs, 0.0)
        return p / p.sum()

    @property
    def entropy(self) -> float:
        """Entropy in nats of ``probs``: 0 = certain, ln V = uniform."""
        return float(entropy(self.probs))


@dataclass(frozen=True)
class Choice:
    """One candidate next token."""

    id: int
    prob: float  # after the temperature
    kept: bool  # survives top-k / top-p


def tempered(logits: np.ndarray, temperature: float) -> np.ndarray:
    """softmax(logits / T) in float64. (V,) -> (V,)"""
    return softmax(np.asarray(logits, dtype=np.float64) / temperature)


def top_k_mask(probs: np.ndarray, k: int | None) -> np.ndarray:
    """(V,) True for the ``k`` most probable tokens (all when k is None or ≥ V); ties by lower id."""
    n = probs.shape[-1]
    if k is None or k >= n:
        return np.ones(n, dtype=bool)
    kth = np.partition(probs, n - k)[n - k]  # the k-th largest probability
    mask = probs > kth
    ties = np.flatnonzero(probs == kth)[: k - int(mask.sum())]
    mask[ties] = True
    return mask


def top_p_mask(probs: np.ndarray, p: float) -> np.ndarray:
    """(V,) True for the smallest set of most probable tokens whose probabilities reach ``p``.

    Only the most probable few hundred tokens are sorted unless they do not reach ``p``.
    """
    n = probs.shape[-1]
    if p >= 1:
        return np.ones(n, dtype=bool)
    target = p * probs.sum() * (1 - 1e-12)
    m = min(n, NUCLEUS_CANDIDATES)
    while True:
        candidates = np.argpartition(-probs, m - 1)[:m] if m < n else np.arange(n)
        order = candidates[np.lexsort((candidates, -probs[candidates]))]  # most probable first
        total = np.cumsum(probs[order])
        if total[-1] >= target or m == n:
            break
        m = min(n, m * 8)
    count = int(np.searchsorted(total, target, side="left")) + 1
    mask = np.zeros(n, dtype=bool)
    mask[order[: min(count, len(order))]] = True
    return mask


def reshape(logits: np.ndarray, temperature: float = 1.0, top_k: int | None = None, top_p: float = 1.0):
    """The Distribution for ``logits`` (V,) under these settings (checked first)."""
    settings = Settings(temperature, top_k, top_p).check()
    probs = tempered(logits, settings.temperature)
    kept = top_k_mask(probs, settings.top_k) & top_p_mask(probs, settings.top_p)
    return Distribution(probs, kept, settings)


def top(dist: Distribution, k: int) -> tuple[list[Choice], float]:
    """The ``k`` most probable tokens, most probable first, and the probability of all the rest."""
    k = max(1, min(int(k), dist.probs.shape[-1]))
    best = np.argpartition(-dist.probs, k - 1)[:k]
    best = best[np.lexsort((best, -dist.probs[best]))]
    choices = [Choice(int(i), float(dist.probs[i]), bool(dist.kept[i])) for i in best]
    return choices, max(0.0, 1.0 - float(dist.probs[best].sum()))


def sample(dist: Distribution, rng: np.random.Generator) -> int:
    """A token id drawn from ``dist.sampling`` with ``rng``."""
    return pick(dist, rng.random())


def pick(dist: Distribution, u: float) -> int:
    """The token where ``u`` in [0, 1) falls in ``dist.sampling``'s cumulative sum."""
    p = dist.sampling
    return int(np.searchsorted(np.cumsum(p), u * p.sum(), side="right").clip(0, len(p) - 1))


class Draws:
    """The random numbers of one generation, from one generator seeded once: the token drawn at
    generated position k (0 = the first after the prompt) uses the seed's k-th number.
    ``decoder.generate`` (the CLI) and the Next token panel both draw through one, so the same
    prompt, settings and seed give the same tokens, and a token undone and drawn again is the same."""

    def __init__(self, seed: int = 0):
        self.seed = int(seed)
        self._rng = np.random.default_rng(self.seed)
        self._numbers: list[float] = []  # the seed's numbers drawn so far, in order
        self.count = 0  # the position the next draw takes by default

    def number(self, k: int) -> float:
        """The seed's k-th number in [0, 1)."""
        while len(self._numbers) <= k:
            self._numbers.append(float(self._rng.random()))
        return self._numbers[k]

    def draw(self, dist: Distribution, at: int | None = None) -> tuple[int, float]:
        """The token drawn from ``dist`` for generated position ``at`` (default: the next one) and
        its probability after the temperature."""
        k = self.count if at is None else int(at)
        token = pick(dist, self.number(k))
        self.count = k + 1
        return token, float(dist.probs[token])
