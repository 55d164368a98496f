"""Why attention divides by √d_k, and how sharp a temperature makes it.

Four experiments, each a pure function of its inputs:

* ``saturate``: softmax of scores × a multiplier and its Jacobian (the gradient that vanishes).
* ``dot_product_spread``: the measured spread of q·k growing like √d_k, and the same ÷ √d_k.
* ``read_temperature`` / ``temperature_sweep``: per-token peak and entropy at a temperature.
* ``compare_scaling`` / ``reprojection_sweep``: the same tokens projected to d_k columns,
  attended with and without the √d_k divisor.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from core import inputs
from core.maths.attention import AttentionTrace, attend, check_matrix, softmax
from core.maths.stats import dot_product_growth, entropy, peak

Progress = Callable[[int, int], None]

# ---------------------------------------------------------------- softmax saturation

MAX_SCORES = 12
MAX_SCORE = 1000.0  # typed scores lie in ±MAX_SCORE


def parse_scores(text: str) -> np.ndarray:
    """Scores typed as numbers separated by commas or spaces, e.g. "1, 2, 3". -> (n,)"""
    return np.array(inputs.reals(text, "Scores", -MAX_SCORE, MAX_SCORE, MAX_SCORES))


def softmax_jacobian(weights: np.ndarray) -> np.ndarray:
    """∂p_i/∂z_j = p_i·(δ_ij − p_j) for p = softmax(z). (n,) -> (n, n); each row sums to 0."""
    p = np.asarray(weights, dtype=np.float64)
    return np.diag(p) - np.outer(p, p)


@dataclass(frozen=True)
class Saturation:
    """Softmax of scores × multiplier, and how strongly each weight still responds to its score."""

    multiplier: float
    logits: np.ndarray  # (n,)  scores × multiplier, the softmax input
    weights: np.ndarray  # (n,)  softmax(logits)
    jacobian: np.ndarray  # (n, n)  ∂weights_i / ∂logits_j
    winner: int  # index of the largest weight

    @property
    def winner_gradient(self) -> float:
        """∂p_w/∂z_w = p_w·(1 − p_w): 1/4 at best, → 0 as the winner takes everything."""
        return float(self.jacobian[self.winner, self.winner])


def saturate(scores: np.ndarray, multiplier: float) -> Saturation:
    """Softmax of ``scores`` (n,) multiplied by ``multiplier`` (> 0), with its Jacobian."""
    scores = check_matrix("Scores", scores, ndim=1)
    if scores.size == 0:
        raise ValueError("Type at least one score, e.g. 1, 2, 3.")
    if not (np.isfinite(multiplier) and multiplier > 0):
        raise ValueError(f"The multiplier must be a positive number, got {multiplier}.")
    with np.errstate(over="ignore"):
        logits = scores * float(multiplier)
    if not np.all(np.isfinite(logits)):
        raise ValueError("Scores × multiplier overflow; use smaller scores.")
    weights = softmax(logits)
    idx, _ = peak(weights)
    return Saturation(float(multiplier), logits, weights, softmax_jacobian(weights), int(idx))


def saturation_sweep(scores: np.ndarray, multipliers: Sequence[float]) -> np.ndarray:
    """The winner's gradient p_w·(1 − p_w) at each multiplier. (m,) -> (m,)"""
    return np.array([saturate(scores, m).winner_gradient for m in multipliers])


# ---------------------------------------------------------------- growth of q·k with d_k

MAX_SAMPLES = 20_000
GROWTH_WIDTHS = 2 ** np.arange(11)  # d_k = 1, 2, 4, … 1024


def capped_samples(requested: int) -> tuple[int, str | None]:
    """The sample count to use and, when ``requested`` was too large, a note saying so."""
    if int(requested) != requested or requested < 2:
        raise ValueError(f"Use at least 2 samples to measure a spread, got {requested}.")
    if requested > MAX_SAMPLES:
        return MAX_SAMPLES, (
            f"{int(requested):,} samples would take too long; using {MAX_SAMPLES:,}, "
            "which already pins the spread to about 1%."
        )
    return int(requested), None


@dataclass(frozen=True)
class Growth:
    """Measured spread (standard deviation) of q·k for random unit-variance q, k."""

    widths: np.ndarray  # (m,)  d_k values
    spread: np.ndarray  # (m,)  std of q·k; about √d_k
    spread_scaled: np.ndarray  # (m,)  std of q·k / √d_k; about 1
    samples: int

    def at(self, d_k: int) -> tuple[float, float]:
        """(spread, scaled spread) measured at width ``d_k``, which must be one of ``widths``."""
        hits = np.flatnonzero(self.widths == d_k)
        if hits.size == 0:
            raise ValueError(f"d_k = {d_k} was not measured; pick one of {self.widths.tolist()}.")
        return float(self.spread[hits[0]]), float(self.spread_scaled[hits[0]])


def dot_product_spread(
    widths: Sequence[int],
    samples: int,
    rng: np.random.Generator,
    progress: Progress | None = None,
) -> Growth:
    """Measure the spread of q·k at each width with ``samples`` pairs (at most MAX_SAMPLES)."""
    dims = np.asarray(widths)
    if dims.ndim != 1 or dims.size == 0 or np.any(dims < 1) or np.any(dims != dims.astype(int)):
        raise ValueError("Every d_k must be a whole number of at least 1.")
    dims = dims.astype(int)
    if samples > MAX_SAMPLES:
        raise ValueError(f"Use at most {MAX_SAMPLES:,} samples, got {samples:,}.")
    spread = np.empty(dims.size)
    for i, width in enumerate(dims):
        spread[i] = dot_product_growth(width, samples, rng)[0]
        if progress is not None:
            progress(i + 1, dims.size)
    return Growth(dims, spread, spread / np.sqrt(dims), int(samples))


# ---------------------------------------------------------------- temperature


@dataclass(frozen=True)
class TokenPreset:
    """Q, K, V drawn from ``default_rng(seed)`` as standard normals (n_tokens, d_k), in order."""

    name: str
    n_tokens: int
    d_k: int
    seed: int


PRESETS = (
    TokenPreset("Article 2 table: 6 tokens, d_k 8, seed 0", 6, 8, 0),
    TokenPreset("Printed sweep: 8 tokens, d_k 16, seed 1", 8, 16, 1),
)
MAX_TOKENS = 16
MAX_WIDTH = 1024


def random_qkv(n_tokens: int, d_k: int, seed: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Q, K, V each (n_tokens, d_k), standard normal, drawn in that order from one seed."""
    if not 1 <= n_tokens <= MAX_TOKENS:
        raise ValueError(f"Use 1 to {MAX_TOKENS} tokens, got {n_tokens}.")
    if not 1 <= d_k <= MAX_WIDTH:
        raise ValueError(f"d_k must be between 1 and {MAX_WIDTH}, got {d_k}.")
    if seed < 0:
        raise ValueError(f"The seed must be 0 or more, got {seed}.")
    rng = np.random.default_rng(seed)
    return tuple(rng.standard_normal((n_tokens, d_k)) for _ in range(3))


@dataclass(frozen=True)
class TemperatureReading:
    """Attention at one temperature, summarised per query token."""

    temperature: float
    trace: AttentionTrace  # the attention call, every step kept
    peak_index: np.ndarray  # (n,)  key each query attends to most
    peak_weight: np.ndarray  # (n,)  that key's weight
    entropy: np.ndarray  # (n,)  nats; 0 = hard lookup, ln(n) = uniform
    mean_entropy: float
    mean_peak: float
    max_entropy: float  # ln(n_keys), reached by uniform attention

    @property
    def weights(self) -> np.ndarray:
        return self.trace.weights  # (n, n)


def read_temperature(Q: np.ndarray, K: np.ndarray, V: np.ndarray, temperature: float) -> TemperatureReading:
    """softmax(Q·Kᵀ / (√d_k·T)) with each row's peak and entropy. Q, K (n, d_k), V (n, d_v)."""
    trace = attend(Q, K, V, temperature=temperature)
    idx, top = peak(trace.weights)
    h = entropy(trace.weights)
    return TemperatureReading(
        float(temperature),
        trace,
        idx,
        top,
        h,
        float(h.mean()),
        float(top.mean()),
        float(np.log(trace.weights.shape[1])),
    )


@dataclass(frozen=True)
class TemperatureSweep:
    temperatures: np.ndarray  # (m,)
    mean_entropy: np.ndarray  # (m,)  nats
    mean_peak: np.ndarray  # (m,)
    max_entropy: float  # ln(n_keys)


def temperature_sweep(
    Q: np.ndarray, K: np.ndarray, V: np.ndarray, temperatures: Sequence[float]
) -> TemperatureSweep:
    """Mean entropy and mean peak weight at each temperature. (m,) -> TemperatureSweep"""
    readings = [read_temperature(Q, K, V, t) for t in temperatures]
    return TemperatureSweep(
        np.array([r.temperature for r in readings]),
        np.array([r.mean_entropy for r in readings]),
        np.array([r.mean_peak for r in readings]),
        readings[0].max_entropy if readings else float("nan"),
    )


# ---------------------------------------------------------------- d_k and the heads budget

D_MODEL = 512


@dataclass(frozen=True)
class Projection:
    """Tokens and full-width projections; the first d_k columns of W_Q/W_K make a head of width d_k.

    Q and K are projected once at full width: the first d_k columns of X·W equal X·W[:, :d_k].
    """

    X: np.ndarray  # (n, d_model)  standard normal tokens
    W_Q: np.ndarray  # (d_model, d_model)  entries N(0, 1/d_model), so each q column has variance ≈ 1
    W_K: np.ndarray  # (d_model, d_model)
    Q: np.ndarray  # (n, d_model)  X·W_Q
    K: np.ndarray  # (n, d_model)  X·W_K


def random_projection(n_tokens: int, seed: int, d_model: int = D_MODEL) -> Projection:
    """Seeded tokens X and projections W_Q, W_K drawn in that order."""
    if not 1 <= n_tokens <= MAX_TOKENS:
        raise ValueError(f"Use 1 to {MAX_TOKENS} tokens, got {n_tokens}.")
    if d_model < 1:
        raise ValueError(f"d_model must be at least 1, got {d_model}.")
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n_tokens, d_model))
    W_Q, W_K = (rng.standard_normal((d_model, d_model)) / np.sqrt(d_model) for _ in range(2))
    return Projection(X, W_Q, W_K, X @ W_Q, X @ W_K)


@dataclass(frozen=True)
class ScalingComparison:
    """One head of width d_k over the same tokens, attended with and without ÷ √d_k."""

    d_k: int
    heads: int  # d_model // d_k: how many such heads the model width pays for
    scaled: AttentionTrace
    unscaled: AttentionTrace
    entropy_scaled: float  # mean over rows, nats
    entropy_unscaled: float


def compare_scaling(proj: Projection, d_k: int) -> ScalingComparison:
    """Q = X·W_Q[:, :d_k], K = X·W_K[:, :d_k], V = X, attended with scale=True and scale=False."""
    d_model = proj.X.shape[1]
    if int(d_k) != d_k or d_k < 1:
        raise ValueError(f"d_k must be a whole number of at least 1, got {d_k}.")
    if d_model % d_k:
        raise ValueError(f"d_k must divide d_model = {d_model} so the heads share it evenly.")
    Q, K = proj.Q[:, :d_k], proj.K[:, :d_k]
    scaled, unscaled = attend(Q, K, proj.X, scale=True), attend(Q, K, proj.X, scale=False)
    return ScalingComparison(
        int(d_k),
        d_model // int(d_k),
        scaled,
        unscaled,
        float(entropy(scaled.weights).mean()),
        float(entropy(unscaled.weights).mean()),
    )


@dataclass(frozen=True)
class ReprojectionSweep:
    widths: np.ndarray  # (m,)  d_k values
    entropy_scaled: np.ndarray  # (m,)  mean entropy with ÷ √d_k
    entropy_unscaled: np.ndarray  # (m,)  mean entropy without it
    max_entropy: float  # ln(n)


def reprojection_sweep(proj: Projection, widths: Sequence[int]) -> ReprojectionSweep:
    """Mean entropy with and without √d_k scaling at each head width."""
    rows = [compare_scaling(proj, d) for d in widths]
    return ReprojectionSweep(
        np.array([r.d_k for r in rows]),
        np.array([r.entropy_scaled for r in rows]),
        np.array([r.entropy_unscaled for r in rows]),
        float(np.log(proj.X.shape[0])),
    )
