"""The Memory panel's states and computations, Qt-free: the student's settings (shared by the
retrieval, β and capacity steps) and the article's fixed experiment (its own step).

    r = compute_memory(MemoryState())   # 4 digits stored, #0 queried with 8 flipped pixels
    r.comparison.modern.weights[0]      # (4,) softmax(β·X·q)
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from core.maths.hopfield import (
    CapacitySweep,
    Comparison,
    article_experiment,
    capacity_sweep,
    corrupt_and_compare,
    digit_glyphs,
    pick_patterns,
    weights_over_beta,
)

N = 64  # neurons: every pattern is an 8 × 8 picture
SOURCES = {"digits": "Digits 0–9 (8 × 8)", "random": "Random ±1 patterns", "article": "Article experiment"}
BETAS = np.geomspace(1e-3, 1e2, 121)  # β axis of the sharpening curve


@dataclass(frozen=True)
class MemoryState:
    source: str = "digits"  # a key of SOURCES
    stored: int = 4
    target: int = 0
    flips: int = 8
    noise: float = 0.0
    beta: float = 1.0
    seed: int = 0


ARTICLE = MemoryState(source="article", stored=9, target=0, flips=6, noise=0.3, beta=1.0, seed=0)
ARTICLE_NOTE = "9 ±1 patterns (classical), 200 Gaussian (modern), 64 dims, β = 1, seed 0"


@dataclass(frozen=True)
class MemoryResult:
    state: MemoryState
    comparison: Comparison
    curve: np.ndarray  # (len(BETAS), M) every stored pattern's weight at each β


def compute_memory(s: MemoryState) -> MemoryResult:
    if s.source == "article":
        comparison = article_experiment(s.seed, s.beta)
    else:
        rng = np.random.default_rng(s.seed)
        patterns = pick_patterns(s.source, s.stored, digit_glyphs(), N, rng)
        comparison = corrupt_and_compare(patterns, s.target, s.flips, s.noise, s.beta, rng)
    curve = weights_over_beta(comparison.modern_patterns, comparison.modern_query, BETAS)
    return MemoryResult(s, comparison, curve)


@dataclass(frozen=True)
class CapacityState:
    """Step 5's sweep: the shared seed, flips and β, and its own trials per load."""

    seed: int = 0
    flips: int = 8
    beta: float = 1.0
    trials: int = 50


def compute_capacity(s: CapacityState, progress=None, partial=None) -> CapacitySweep:
    """The capacity sweep of ``s`` (``core.maths.hopfield.capacity_sweep``), each load's point
    handed to ``partial`` as it is measured."""
    rng = np.random.default_rng(s.seed)
    return capacity_sweep(
        rng, n=N, trials=s.trials, flips=s.flips, beta=s.beta, progress=progress, partial=partial
    )
