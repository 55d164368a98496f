"""The Linear attention panel's states and computations, Qt-free: the bracket trick on the first
article's example, feature maps against softmax, the running state beside KV caches, and
associative recall. Each ``compute_*`` raises ValueError with a message for bad settings.

    r = compute_bracket(BracketState())   # "the cat sat down", d_model 8, d_k 4, seed 0
    r.linear_rows - r.bracket.output      # the same rows, through n × n and through d × d
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

import numpy as np

from core.lab.settings import RecallSettings
from core.maths.attention import AttentionTrace, attend
from core.maths.cache_size import CACHES, cache_bytes
from core.maths.linear import (
    Bracket,
    OpCounts,
    bracket,
    causal_check,
    elu_plus_one,
    favor_weights,
    feature_error,
    feature_weights,
    features,
    kernel_inputs,
    op_counts,
    parallel,
    random_directions,
    seeded_inputs,
    state_at,
)
from core.maths.qkv import random_example, tokenize
from core.maths.recall import RecallSweep, default_pairs, recall_sweep

MAX_TOKENS = 16  # the pictures of steps 1 and 2 stay readable
MAX_WIDTH = 16
COUNT_LENGTHS = np.unique(np.round(np.geomspace(1, 1 << 20, 41)).astype(int))  # the count plot's n
FEATURE_COUNTS = (8, 16, 32, 64, 128, 256, 512, 1024)  # m on the error curve
CACHE_LENGTHS = np.unique(np.round(np.geomspace(1, 1 << 20, 41)).astype(int))


def projections(
    text: str, d_model: int, d_k: int, seed: int
) -> tuple[list[str], np.ndarray, np.ndarray, np.ndarray]:
    """The first article's recipe: tokens, then Q, K, V (n, d_k) from seeded random weights."""
    tokens = tokenize(text, MAX_TOKENS)
    if not 1 <= d_k <= MAX_WIDTH or not 1 <= d_model <= MAX_WIDTH:
        raise ValueError(f"d_model and d_k go from 1 to {MAX_WIDTH} here, so every number stays on screen.")
    Q, K, V = random_example(tokens, d_model, d_k, seed).projections()
    return tokens, Q, K, V


# --- 1. The bracket trick ---------------------------------------------------------------------
@dataclass(frozen=True)
class BracketState:
    text: str = "the cat sat down"
    d_model: int = 8
    d_k: int = 4
    seed: int = 0


@dataclass(frozen=True)
class BracketResult:
    tokens: list[str]
    softmax: AttentionTrace  # weights (n, n), output (n, d_k)
    linear_weights: np.ndarray  # (n, n) φ(q)·φ(k) / normaliser: the matrix the bracket avoids
    linear_rows: np.ndarray  # (n, d_k) those weights times V
    bracket: Bracket  # state (d_k, d_k), sum_keys, normaliser, output
    counts: OpCounts  # at this text's length

    @property
    def difference(self) -> float:
        """Largest |n × n form − d × d form|: rounding only."""
        return float(np.abs(self.linear_rows - self.bracket.output).max())


def compute_bracket(s: BracketState) -> BracketResult:
    tokens, Q, K, V = projections(s.text, s.d_model, s.d_k, s.seed)
    Qf, Kf = elu_plus_one(Q), elu_plus_one(K)
    weights = feature_weights(Qf, Kf)
    return BracketResult(
        tokens, attend(Q, K, V), weights, weights @ V, bracket(Qf, Kf, V), op_counts(len(tokens), s.d_k)
    )


def count_curves(d: int) -> tuple[np.ndarray, np.ndarray]:
    """Multiply-adds of softmax and of linear attention at every n of COUNT_LENGTHS, width d."""
    counts = [op_counts(int(n), d) for n in COUNT_LENGTHS]
    return np.array([c.softmax for c in counts], float), np.array([c.linear for c in counts], float)


# --- 2. Feature maps --------------------------------------------------------------------------
@dataclass(frozen=True)
class FeatureState:
    text: str = "the cat sat down"
    d_k: int = 4
    seed: int = 0
    temperature: float = 1.0
    row: int = 1  # the query whose weights are compared ("cat")
    features: int = 64  # m random features
    feature_seed: int = 0


@dataclass(frozen=True)
class FeatureResult:
    tokens: list[str]
    row: int  # the row shown, within the text
    weights: dict[str, np.ndarray]  # "softmax", "elu", "relu", "favor" → (n,) weights of the row
    errors: dict[str, float]  # mean |weight − softmax| over every row, for each map
    curve: np.ndarray  # (len(FEATURE_COUNTS),) FAVOR+'s error, mean over DRAWS draws


def compute_features(s: FeatureState) -> FeatureResult:
    if not 0.05 <= s.temperature <= 20:
        raise ValueError("Temperature goes from 0.05 to 20.")
    if not 1 <= s.features <= FEATURE_COUNTS[-1]:
        raise ValueError(f"Use 1 to {FEATURE_COUNTS[-1]} random features.")
    tokens, Q, K, _ = projections(s.text, 8, s.d_k, s.seed)
    row = min(s.row, len(tokens) - 1)
    exact = attend(Q, K, K, temperature=s.temperature).weights
    q, k = kernel_inputs(Q, K, s.temperature)
    omega = random_directions(s.features, s.d_k, s.feature_seed)
    every = {
        "softmax": exact,
        "elu": feature_weights(elu_plus_one(q), elu_plus_one(k)),
        "relu": feature_weights(features("relu", q), features("relu", k)),
        "favor": favor_weights(q, k, omega),
    }
    errors = {name: float(np.abs(w - exact).mean()) for name, w in every.items() if name != "softmax"}
    curve = error_curve(s.text, s.d_k, s.seed, s.temperature, s.feature_seed)
    return FeatureResult(tokens, row, {name: w[row] for name, w in every.items()}, errors, curve)


@functools.lru_cache(maxsize=16)
def error_curve(text: str, d_k: int, seed: int, temperature: float, feature_seed: int) -> np.ndarray:
    """(len(FEATURE_COUNTS),) random features' mean error at each m: kept, since the slider for
    m and the query row leave it as it is."""
    _, Q, K, _ = projections(text, 8, d_k, seed)
    curve = np.array([feature_error(Q, K, m, feature_seed, temperature) for m in FEATURE_COUNTS])
    curve.flags.writeable = False
    return curve


# --- 3. The running state ---------------------------------------------------------------------
@dataclass(frozen=True)
class RunningState:
    length: int = 12
    d: int = 4
    chunk: int = 4
    seed: int = 0
    token: int = 5  # the token whose state is shown (from 0)
    context: int = 32_768  # the length the cache table is read at


@dataclass(frozen=True)
class RunningResult:
    token: int
    S: np.ndarray  # (d, d) the state after token t (not ``state``: that names a result's settled state)
    z: np.ndarray  # (d,) the sum of the keys' features so far
    from_state: np.ndarray  # (d,) token t's output read from the state
    parallel: np.ndarray  # (T, d) the masked parallel form
    max_diff: dict[str, float]  # "recurrent", "chunked" → largest |difference| from parallel
    caches: list[tuple[str, str, int, int]]  # (model, kind, bytes for the first token, bytes at context)


def compute_running(s: RunningState) -> RunningResult:
    if not 1 <= s.length <= 64 or not 1 <= s.d <= MAX_WIDTH:
        raise ValueError(f"Use 1 to 64 tokens and a width of 1 to {MAX_WIDTH}.")
    if not 1 <= s.chunk <= s.length:
        raise ValueError(f"A chunk holds 1 to {s.length} tokens (the whole text).")
    if not 1 <= s.context <= 1 << 24:
        raise ValueError(f"Read the caches at 1 to {1 << 24:,} tokens.")
    Qf, Kf, V = seeded_inputs(s.length, s.d, s.seed)
    t = min(s.token, s.length - 1)
    S, z = state_at(Kf, V, t)
    caches = [(c.model, c.kind, c.first_token_bytes(), cache_bytes(c, s.context)) for c in CACHES]
    exact = parallel(Qf, Kf, V, causal=True)
    return RunningResult(t, S, z, Qf[t] @ S / (Qf[t] @ z), exact, causal_check(Qf, Kf, V, s.chunk), caches)


def cache_curves() -> dict[str, np.ndarray]:
    """Bytes each model of CACHES holds at every length of CACHE_LENGTHS."""
    return {c.model: np.array([cache_bytes(c, int(n)) for n in CACHE_LENGTHS], float) for c in CACHES}


# --- 4. What it forgets -----------------------------------------------------------------------
@dataclass(frozen=True)
class RecallState:
    dim: int = 64
    beta: float = 8.0
    decay: float = 0.95
    seed: int = 0


def compute_recall(s: RecallState, progress=None, partial=None) -> RecallSweep:
    """The sweep of N from d/8 to 8d, each N landing as it is measured."""
    return recall_sweep(s.dim, default_pairs(s.dim), s.beta, s.decay, s.seed, progress, partial)


# --- 5. Trained, not assumed -------------------------------------------------------------------
def check_training(s: RecallSettings) -> RecallSettings:
    """The training settings, or ValueError saying which one is out of range."""
    return s.checked()
