"""Associative memory: the classical Hopfield network and its modern, attention-shaped successor.

Classical (Hopfield, 1982): Hebbian weights W = XᵀX / N with a zero diagonal. Hopfield updated
one neuron at a time, which always settles; here, as in the second article's code, every neuron
updates at once, s ← sign(W·s) (ties go to +1), until the state stops changing or the steps run
out (a synchronous update can cycle). It holds about 0.14·N random patterns.

Modern (Ramsauer et al., 2020): one update ξ ← Xᵀ·softmax(β·X·ξ). That is scaled dot-product
attention with the query ξ and keys = values = X, where β = 1 / (√d · T).

Shapes: M stored patterns of N numbers each (N neurons, or d = N dimensions); B queries.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from enum import StrEnum
from functools import lru_cache
from importlib.resources import files

import numpy as np

from core.maths.attention import AttentionTrace, attend, check_matrix, softmax
from core.maths.stats import reliable_count

__all__ = [
    "ARTICLE_STORED", "BETA_RANGE", "CAPACITY_RATIO", "MAX_STEPS", "TOLERANCE", "CapacitySweep",
    "ClassicalHopfield", "ClassicalRetrieval", "Comparison", "ModernHopfield", "ModernRetrieval",
    "Outcome", "Progress", "Verdict", "add_noise", "article_experiment", "beta_for_temperature",
    "capacity_sweep", "check_beta", "check_patterns", "compare", "corrupt_and_compare", "default_loads",
    "digit_glyphs", "flip_bits", "glyph_patterns", "hebbian_weights", "judge", "pick_patterns",
    "random_bipolar", "recovered", "sign_step", "temperature_for_beta", "weights_over_beta"
]  # fmt: skip

CAPACITY_RATIO = 0.14  # classical capacity ≈ 0.14·N random patterns
BETA_RANGE = (1e-6, 1e6)  # β outside this range is rejected before it can overflow
TOLERANCE = 0.3  # a retrieval counts as recovered when every entry is within this of the target
MAX_STEPS = 20  # classical updates before giving up on convergence

Progress = Callable[[int, int], None]


def check_patterns(patterns: np.ndarray, bipolar: bool = False) -> np.ndarray:
    """Return stored patterns as float64 (M, N), or raise ValueError saying what to fix."""
    x = check_matrix("The stored patterns", patterns)
    if x.shape[0] == 0:
        raise ValueError("Store at least one pattern before retrieving.")
    if x.shape[1] == 0:
        raise ValueError("Each pattern needs at least one entry.")
    if bipolar and not np.all(np.abs(x) == 1.0):
        raise ValueError("The classical network stores bipolar patterns: use only +1 and −1.")
    return x


def check_beta(beta: float) -> float:
    """Return β as a float, or raise ValueError if it is not in BETA_RANGE."""
    low, high = BETA_RANGE
    if not (np.isfinite(beta) and low <= beta <= high):
        raise ValueError(f"β must be a number between {low:g} and {high:g}, got {beta}.")
    return float(beta)


def temperature_for_beta(beta: float, d: int) -> float:
    """The attention temperature T that makes softmax(q·Kᵀ / (√d·T)) use inverse temperature β."""
    return 1.0 / (check_beta(beta) * np.sqrt(d))


def beta_for_temperature(temperature: float, d: int) -> float:
    """β = 1 / (√d·T): the inverse temperature of attention with width d and temperature T."""
    if not (np.isfinite(temperature) and temperature > 0):
        raise ValueError(f"Temperature must be a positive number, got {temperature}.")
    return 1.0 / (temperature * np.sqrt(d))


def random_bipolar(m: int, n: int, rng: np.random.Generator) -> np.ndarray:
    """M random patterns of N entries, each +1 or −1 with equal chance. (m, n)"""
    return rng.choice([-1.0, 1.0], size=(m, n))


def flip_bits(patterns: np.ndarray, k: int, rng: np.random.Generator) -> np.ndarray:
    """Copy of ``patterns`` with k distinct random entries of each row negated. (..., N)"""
    x = np.array(patterns, dtype=np.float64)
    n = x.shape[-1]
    if int(k) != k or not 0 <= k <= n:
        raise ValueError(f"Flip between 0 and {n} entries (the pattern length), got {k}.")
    if x.ndim == 1:
        x[rng.choice(n, int(k), replace=False)] *= -1.0
        return x
    picks = np.argsort(rng.random(x.shape), axis=-1)[..., : int(k)]  # (..., k) distinct per row
    np.put_along_axis(x, picks, -np.take_along_axis(x, picks, axis=-1), axis=-1)
    return x


def add_noise(patterns: np.ndarray, sigma: float, rng: np.random.Generator) -> np.ndarray:
    """``patterns`` plus Gaussian noise of standard deviation sigma. (..., N)"""
    if not (np.isfinite(sigma) and sigma >= 0):
        raise ValueError(f"The noise level must be zero or a positive number, got {sigma}.")
    x = np.asarray(patterns, dtype=np.float64)
    return x + sigma * rng.standard_normal(x.shape)


def recovered(outputs: np.ndarray, targets: np.ndarray, tolerance: float = TOLERANCE) -> np.ndarray:
    """True where every entry of an output is within ``tolerance`` of its target. (..., N)->(...)"""
    return np.all(np.abs(np.asarray(outputs) - np.asarray(targets)) <= tolerance, axis=-1)


# ----------------------------------------------------------------------------- classical


def hebbian_weights(patterns: np.ndarray) -> np.ndarray:
    """W = Σ_μ ξ_μ·ξ_μᵀ / N with a zero diagonal. patterns (M, N) -> (N, N), symmetric."""
    x = check_patterns(patterns, bipolar=True)
    w = x.T @ x / x.shape[1]
    np.fill_diagonal(w, 0.0)
    return w


def sign_step(weights: np.ndarray, states: np.ndarray) -> np.ndarray:
    """One synchronous update sign(W·s) of every state, ties to +1. (N, N), (..., N) -> (..., N)"""
    return np.where(states @ weights >= 0, 1.0, -1.0)  # W is symmetric, so s·W = (W·s)ᵀ


@dataclass(frozen=True)
class ClassicalRetrieval:
    """The path of each query to its resting state."""

    states: np.ndarray  # (steps + 1, B, N)  row 0 = sign of the query, then one row per update
    converged: np.ndarray  # (B,) bool: the last state is a fixed point of the update

    @property
    def final(self) -> np.ndarray:  # (B, N)
        return self.states[-1]

    @property
    def steps(self) -> int:
        return self.states.shape[0] - 1


class ClassicalHopfield:
    """Hebbian network over bipolar patterns (M, N); retrieval iterates sign updates."""

    def __init__(self, patterns: np.ndarray):
        self.patterns = check_patterns(patterns, bipolar=True)  # (M, N)
        self.weights = hebbian_weights(self.patterns)  # (N, N)

    @property
    def n(self) -> int:
        return self.patterns.shape[1]

    def retrieve(self, queries: np.ndarray, max_steps: int = MAX_STEPS) -> ClassicalRetrieval:
        """Update all queries (B, N) — a single (N,) counts as B = 1 — until none changes."""
        q = check_matrix("The query", np.atleast_2d(queries))
        if q.shape[1] != self.n:
            raise ValueError(f"The query needs {self.n} entries, one per neuron; got {q.shape[1]}.")
        if max_steps < 0:
            raise ValueError(f"The number of update steps cannot be negative, got {max_steps}.")
        state = np.where(q >= 0, 1.0, -1.0)
        states = [state]
        for _ in range(max_steps):
            new = sign_step(self.weights, state)
            if np.array_equal(new, state):
                break
            state = new
            states.append(state)
        converged = np.all(sign_step(self.weights, state) == state, axis=-1)
        return ClassicalRetrieval(np.stack(states), converged)


# ----------------------------------------------------------------------------- modern


@dataclass(frozen=True)
class ModernRetrieval:
    """One modern Hopfield update, kept as the attention call that computes it."""

    trace: AttentionTrace  # queries (B, N) against keys = values = the stored patterns (M, N)
    beta: float

    @property
    def weights(self) -> np.ndarray:  # (B, M) softmax(β·X·ξ): how much of each stored pattern
        return self.trace.weights

    @property
    def output(self) -> np.ndarray:  # (B, N) Xᵀ·weights: the retrieved pattern
        return self.trace.output


class ModernHopfield:
    """Continuous network over patterns (M, N) with inverse temperature β; one-step retrieval."""

    def __init__(self, patterns: np.ndarray, beta: float = 1.0):
        self.patterns = check_patterns(patterns)  # (M, N)
        self.beta = check_beta(beta)

    @property
    def temperature(self) -> float:
        """The attention temperature that gives the same softmax: T = 1 / (β·√d)."""
        return temperature_for_beta(self.beta, self.patterns.shape[1])

    def retrieve(self, queries: np.ndarray) -> ModernRetrieval:
        """ξ_new = Xᵀ·softmax(β·X·ξ) for each query (B, N) — a single (N,) counts as B = 1."""
        q = check_matrix("The query", np.atleast_2d(queries))
        n = self.patterns.shape[1]
        if q.shape[1] != n:
            raise ValueError(f"The query needs {n} entries, like the patterns; got {q.shape[1]}.")
        x = self.patterns
        return ModernRetrieval(attend(q, x, x, temperature=self.temperature), self.beta)


# ----------------------------------------------------------------------------- verdicts


class Outcome(StrEnum):
    RECOVERED = "recovered the target"
    OTHER = "landed on another stored pattern"
    MIRROR = "landed on the mirror image (−1 ×) of a stored pattern"
    BLEND = "settled on a spurious blend"


@dataclass(frozen=True)
class Verdict:
    outcome: Outcome
    nearest: int  # index of the stored pattern with the largest |cosine similarity|
    similarity: np.ndarray  # (M,) cosine similarity of the output with each stored pattern


def judge(output: np.ndarray, patterns: np.ndarray, target: int, tolerance: float = TOLERANCE) -> Verdict:
    """Say where one retrieval ended up: the target, another pattern, a mirror image, or a blend.

    output (N,), patterns (M, N); ``target`` is the index of the pattern the query came from.
    """
    x = check_patterns(patterns)
    out = np.asarray(output, dtype=np.float64)
    if not 0 <= target < x.shape[0]:
        raise ValueError(f"The target must be one of {x.shape[0]} stored patterns, got {target}.")
    norms = np.linalg.norm(x, axis=1) * np.linalg.norm(out)
    similarity = np.divide(x @ out, norms, out=np.zeros(x.shape[0]), where=norms > 0)
    nearest = int(np.argmax(np.abs(similarity)))
    if recovered(out, x[target], tolerance):
        outcome = Outcome.RECOVERED
    elif np.any(recovered(out, x, tolerance)):
        outcome = Outcome.OTHER
    elif np.any(recovered(out, -x, tolerance)):
        outcome = Outcome.MIRROR
    else:
        outcome = Outcome.BLEND
    return Verdict(outcome, nearest, similarity)


# ----------------------------------------------------------------------------- capacity


def default_loads(top: int = 400, points: int = 20) -> np.ndarray:
    """``points`` distinct pattern counts from 1 to ``top``, spaced about geometrically."""
    if points < 1 or top < points:
        raise ValueError(f"Need 1 ≤ points ≤ top to spread distinct loads, got {points} and {top}.")
    loads = np.round(np.geomspace(1, top, points)).astype(int)
    for i in range(1, points):  # keep them distinct where rounding merges neighbours
        loads[i] = max(loads[i], loads[i - 1] + 1)
    return loads


@dataclass(frozen=True)
class CapacitySweep:
    """Retrieval success rate per number of stored patterns, for both networks."""

    loads: np.ndarray  # (L,) number of stored patterns M
    classical: np.ndarray  # (L,) fraction of corrupted queries the classical network recovered
    modern: np.ndarray  # (L,) same for the modern network
    n: int  # neurons / dimensions
    flips: int  # entries flipped in each query
    beta: float  # modern inverse temperature
    trials: int  # fresh pattern sets per load

    @property
    def classical_limit(self) -> float:
        """The textbook classical capacity, 0.14·N patterns."""
        return CAPACITY_RATIO * self.n

    def reliable_load(self, rates: np.ndarray, level: float = 0.9) -> int:
        """The largest load up to which every rate in ``rates`` (L,) is at least ``level``;
        0 if even the smallest load falls short."""
        return reliable_count(self.loads, rates, level)


def capacity_sweep(
    rng: np.random.Generator,
    n: int = 64,
    loads: np.ndarray | None = None,
    trials: int = 50,
    flips: int = 6,
    beta: float = 1.0,
    tolerance: float = TOLERANCE,
    progress: Progress | None = None,
    partial: Callable[[CapacitySweep], None] | None = None,
) -> CapacitySweep:
    """For each load M: ``trials`` times store M random bipolar patterns of N entries in both
    networks, corrupt every stored pattern by flipping ``flips`` entries, retrieve all M queries
    at once, and count the recoveries. ``progress(done, total)`` is called after each trial, and
    ``partial(sweep)`` after each load with the sweep of the loads done so far.
    """
    loads = default_loads() if loads is None else np.asarray(loads, dtype=int)
    if n < 1:
        raise ValueError(f"The network needs at least one neuron, got N = {n}.")
    if loads.ndim != 1 or loads.size == 0 or np.any(loads < 1):
        raise ValueError("Give at least one load, and store at least one pattern at every load.")
    if trials < 1:
        raise ValueError(f"Run at least one trial per load, got {trials}.")
    if not 0 <= flips <= n:
        raise ValueError(f"Flip between 0 and {n} entries (the pattern length), got {flips}.")
    check_beta(beta)
    total, done = loads.size * trials, 0
    classical, modern = np.zeros(loads.size), np.zeros(loads.size)
    for i, m in enumerate(loads):
        for _ in range(trials):
            x = random_bipolar(int(m), n, rng)
            queries = flip_bits(x, flips, rng)
            settled = ClassicalHopfield(x).retrieve(queries).final  # (M, N)
            attended = ModernHopfield(x, beta).retrieve(queries).output  # (M, N)
            classical[i] += recovered(settled, x, tolerance).sum()
            modern[i] += recovered(attended, x, tolerance).sum()
            done += 1
            if progress is not None:
                progress(done, total)
        if partial is not None and i + 1 < loads.size:
            k = slice(0, i + 1)
            so_far = loads[k] * trials  # queries asked at each load done
            rates = classical[k] / so_far, modern[k] / so_far
            partial(CapacitySweep(loads[k], *rates, n, flips, beta, trials))
    per_load = loads * trials
    return CapacitySweep(loads, classical / per_load, modern / per_load, n, flips, beta, trials)


# ----------------------------------------------------------------------------- side by side


@dataclass(frozen=True)
class Comparison:
    """One corrupted query put to both networks, and where each one ended up."""

    classical_patterns: np.ndarray  # (M_c, N) ±1, stored in the classical network
    modern_patterns: np.ndarray  # (M_m, N), stored in the modern network
    target: int  # index of the pattern both queries were made from
    classical_query: np.ndarray  # (N,)
    modern_query: np.ndarray  # (N,)
    classical: ClassicalRetrieval
    modern: ModernRetrieval
    classical_verdict: Verdict
    modern_verdict: Verdict


def compare(
    classical_patterns: np.ndarray,
    modern_patterns: np.ndarray,
    target: int,
    classical_query: np.ndarray,
    modern_query: np.ndarray,
    beta: float,
) -> Comparison:
    """Retrieve with both networks and judge each result against its stored pattern ``target``."""
    classical = ClassicalHopfield(classical_patterns)
    modern = ModernHopfield(modern_patterns, beta)
    c = classical.retrieve(classical_query)
    m = modern.retrieve(modern_query)
    return Comparison(
        classical.patterns,
        modern.patterns,
        target,
        np.asarray(classical_query, dtype=np.float64),
        np.asarray(modern_query, dtype=np.float64),
        c,
        m,
        judge(c.final[0], classical.patterns, target),
        judge(m.output[0], modern.patterns, target),
    )


def corrupt_and_compare(
    patterns: np.ndarray,
    target: int,
    flips: int,
    noise: float,
    beta: float,
    rng: np.random.Generator,
) -> Comparison:
    """Store bipolar ``patterns`` (M, N) in both networks; query both with pattern ``target``
    after flipping ``flips`` entries and adding Gaussian noise of standard deviation ``noise``.
    """
    x = check_patterns(patterns, bipolar=True)
    if not 0 <= target < x.shape[0]:
        raise ValueError(f"Pick a target between 0 and {x.shape[0] - 1}, got {target}.")
    query = add_noise(flip_bits(x[target], flips, rng), noise, rng)
    return compare(x, x, target, query, query, beta)


def weights_over_beta(patterns: np.ndarray, query: np.ndarray, betas: np.ndarray) -> np.ndarray:
    """softmax(β·X·q) for each β: how the weights over the stored patterns sharpen with β.

    patterns (M, N), query (N,), betas (B,) -> (B, M)
    """
    x = check_patterns(patterns)
    q = check_matrix("The query", np.atleast_2d(query))[0]
    betas = np.array([check_beta(b) for b in np.atleast_1d(betas)])
    return softmax(betas[:, None] * (x @ q)[None, :], axis=-1)


def glyph_patterns(glyphs: list[list[str]]) -> np.ndarray:
    """Pictures drawn as rows of text ("#" = +1, anything else = −1) as bipolar rows. -> (M, h·w)"""
    shapes = {(len(g), len(g[0]) if g else 0) for g in glyphs}
    if len(shapes) != 1 or any(len(row) != len(g[0]) for g in glyphs for row in g):
        raise ValueError("Every glyph needs the same number of rows and of characters per row.")
    return np.array([[1.0 if c == "#" else -1.0 for c in "".join(g)] for g in glyphs])


@lru_cache(maxsize=1)
def digit_glyphs() -> np.ndarray:
    """The ten 8 × 8 digit pictures shipped in resources/presets, 0 to 9, as bipolar rows. (10, 64)"""
    data = json.loads(files("resources").joinpath("presets", "memory_digits.json").read_text("utf-8"))
    return glyph_patterns(list(data["glyphs"].values()))


# ----------------------------------------------------------------------------- the article

ARTICLE_STORED = 9  # classical patterns the article stores (≈ 0.14 · 64)


def article_experiment(seed: int = 0, beta: float = 1.0) -> Comparison:
    """The second article's experiment, with its random draws in its order: 9 bipolar patterns
    in a classical network, 200 Gaussian ones in a modern network (it uses β = 1), 64 dimensions;
    pattern 0 queried with 6 flipped entries / with added noise of standard deviation 0.3.
    """
    rng = np.random.default_rng(seed)
    bipolar = random_bipolar(200, 64, rng)
    continuous = rng.standard_normal((200, 64))
    noisy_bipolar = flip_bits(bipolar[0], 6, rng)
    noisy_continuous = add_noise(continuous[0], 0.3, rng)
    return compare(bipolar[:ARTICLE_STORED], continuous, 0, noisy_bipolar, noisy_continuous, beta)


def pick_patterns(
    source: str, stored: int, glyphs: np.ndarray, n: int, rng: np.random.Generator
) -> np.ndarray:
    """The patterns to store: the first ``stored`` glyphs (source "digits") or ``stored`` random ±1
    patterns of length ``n`` (source "random"); ValueError saying what to choose otherwise."""
    if stored < 1:
        raise ValueError("Store at least one pattern: set Stored to 1 or more.")
    if source == "digits":
        if stored > len(glyphs):
            raise ValueError(f"There are {len(glyphs)} digit pictures; store at most that many.")
        return glyphs[:stored]
    if source == "random":
        return random_bipolar(stored, n, rng)
    raise ValueError(f"Unknown pattern source {source!r}; choose digits or random.")
