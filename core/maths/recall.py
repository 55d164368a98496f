"""Associative recall: store N key → value pairs in a memory, then ask it for every key.

The pairs are random unit vectors in d dimensions. Four memories read the same pairs:

- softmax: out = Σ_i softmax(β·k_i·q) v_i, every pair kept (the Memory panel's modern Hopfield step);
- linear: the elu + 1 features of keys read as a layer's projections (entries of variance 1,
  √d·k), with their normaliser: every pair of positive features overlaps;
- delta: S ← S + (v − S·k)·kᵀ, DeltaNet's rule at β_t = 1: it first takes out what the memory
  already says for k, so a new pair overwrites rather than piles on; out = S·q;
- gated: S ← γ·S + v·kᵀ, a forgetting factor as in Mamba-2 and GLA; γ = 1 is the plain
  outer-product (fast-weight) memory.

A key counts as recalled when the stored value nearest the output (largest cosine) is its own.

    recall_rates(*draw(64, 32, trials=4, rng=np.random.default_rng(0)), beta=8.0, decay=0.95)
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from core.maths.attention import softmax
from core.maths.linear import elu_plus_one
from core.maths.stats import reliable_count

__all__ = [
    "BETA_RANGE", "DECAY_RANGE", "DIM_RANGE", "MEMORIES", "PAIRS_RANGE", "RecallSweep", "default_pairs",
    "delta_state", "draw", "gated_state", "recall_outputs", "recall_rates", "recall_sweep", "sweep_bytes",
]  # fmt: skip

MEMORIES = {
    "softmax": "softmax",
    "linear": "linear (elu + 1)",
    "delta": "delta rule",
    "gated": "gated (decay γ)",
}
QUERIES = 512  # each point averages over at least this many queries (fresh pairs per trial)
MAX_BYTES = 512 * 2**20  # the largest working set a sweep may need
DIM_RANGE = (2, 512)
PAIRS_RANGE = (1, 16_384)
BETA_RANGE = (0.01, 1_000.0)  # softmax's sharpness on unit keys (√d is scaled attention's)
DECAY_RANGE = (0.0, 1.0)  # the gated memory's γ


def unit_rows(x: np.ndarray) -> np.ndarray:
    return x / np.linalg.norm(x, axis=-1, keepdims=True)


def draw(pairs: int, dim: int, trials: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """Keys and values, each (trials, N, d): random unit vectors."""
    return unit_rows(rng.normal(size=(trials, pairs, dim))), unit_rows(rng.normal(size=(trials, pairs, dim)))


def delta_state(keys: np.ndarray, values: np.ndarray) -> np.ndarray:
    """(trials, d, d) the state after writing every pair with the delta rule, in order."""
    state = np.zeros((keys.shape[0], values.shape[2], keys.shape[2]))
    for i in range(keys.shape[1]):
        k, v = keys[:, i], values[:, i]  # (trials, d)
        error = v - np.einsum("tvk,tk->tv", state, k)  # what the memory gets wrong about k
        state += np.einsum("tv,tk->tvk", error, k)
    return state


def gated_state(keys: np.ndarray, values: np.ndarray, decay: float) -> np.ndarray:
    """(trials, d, d) Σ_i γ^(N−1−i) v_i·k_iᵀ: the decayed sum written out, pair i fading with age."""
    age = np.arange(keys.shape[1] - 1, -1, -1)
    return np.einsum("tiv,tik->tvk", values * decay ** age[None, :, None], keys)


def recall_outputs(keys: np.ndarray, values: np.ndarray, beta: float, decay: float) -> dict[str, np.ndarray]:
    """What each memory answers (trials, N, d) when asked for each of its keys (trials, N, d)."""
    dim = keys.shape[2]
    features = elu_plus_one(math.sqrt(dim) * keys)  # (trials, N, d)
    overlap = features @ features.transpose(0, 2, 1)  # (trials, N, N) φ(k_i)·φ(k_j) > 0
    return {
        "softmax": softmax(beta * keys @ keys.transpose(0, 2, 1)) @ values,
        "linear": overlap @ values / overlap.sum(axis=2, keepdims=True),
        "delta": keys @ delta_state(keys, values).transpose(0, 2, 1),
        "gated": keys @ gated_state(keys, values, decay).transpose(0, 2, 1),
    }


def recall_rates(keys: np.ndarray, values: np.ndarray, beta: float, decay: float) -> dict[str, float]:
    """The share of keys (trials, N, d) whose own value (trials, N, d) each memory gives back."""
    outputs = recall_outputs(keys, values, beta, decay)
    own = np.arange(keys.shape[1])
    return {
        name: float(np.mean(np.argmax(out @ values.transpose(0, 2, 1), axis=2) == own))
        for name, out in outputs.items()
    }


def default_pairs(dim: int) -> tuple[int, ...]:
    """N from d/8 to 8d, doubling (7 values for d = 64)."""
    return tuple(int(n) for n in np.unique(np.round(dim * 2.0 ** np.arange(-3, 4)).clip(1)))


def _trials(pairs: int) -> int:
    return max(1, math.ceil(QUERIES / pairs))


def sweep_bytes(dim: int, pairs: tuple[int, ...]) -> int:
    """The largest working set of a sweep: a few (trials, N, max(N, d)) float64 arrays at once."""
    return max(6 * 8 * _trials(n) * n * max(n, dim) for n in pairs) if pairs else 0


@dataclass(frozen=True)
class RecallSweep:
    """Recall against the number of stored pairs; ``rates`` may stop short of ``pairs``."""

    dim: int
    pairs: tuple[int, ...]  # (P,) every N asked for
    rates: dict[str, tuple[float, ...]]  # memory → share recalled at each N measured so far
    beta: float
    decay: float
    seed: int

    @property
    def measured(self) -> int:
        return len(self.rates["softmax"])

    def knee(self, memory: str, level: float = 0.9) -> int:
        """The largest N up to which ``memory`` recalls at least ``level`` of its keys; 0 if none."""
        return reliable_count(self.pairs, self.rates[memory], level)

    def to_json(self) -> dict:
        rows = [
            {"pairs": n} | {m: round(r[i], 6) for m, r in self.rates.items()}
            for i, n in enumerate(self.pairs)
        ]
        return {"dim": self.dim, "beta": self.beta, "decay": self.decay, "seed": self.seed, "recall": rows}


def recall_sweep(
    dim: int,
    pairs: tuple[int, ...],
    beta: float,
    decay: float,
    seed: int,
    progress: Callable[[int, int], None] | None = None,
    partial: Callable[[RecallSweep], None] | None = None,
) -> RecallSweep:
    """Recall of every memory at each N of ``pairs``, averaged over ≥ QUERIES keys (fresh pairs
    per trial, seeded). ``partial`` receives the sweep after each N; refused before it starts
    when its working set would pass MAX_BYTES."""
    if sweep_bytes(dim, pairs) > MAX_BYTES:
        need = sweep_bytes(dim, pairs) / 2**20
        raise ValueError(
            f"This sweep would hold about {need:,.0f} MiB at once (at most {MAX_BYTES // 2**20} MiB); "
            "ask for fewer pairs or a smaller dimension."
        )
    rng = np.random.default_rng(seed)
    rates: dict[str, list[float]] = {name: [] for name in MEMORIES}
    sweep = RecallSweep(dim, tuple(pairs), {}, beta, decay, seed)
    for done, n in enumerate(pairs, 1):
        measured = recall_rates(*draw(n, dim, _trials(n), rng), beta, decay)
        for name, rate in measured.items():
            rates[name].append(rate)
        sweep = RecallSweep(dim, tuple(pairs), {m: tuple(r) for m, r in rates.items()}, beta, decay, seed)
        if partial is not None and done < len(pairs):
            partial(sweep)
        if progress is not None:
            progress(done, len(pairs))
    return sweep
