"""The Position panel's states and computations, Qt-free: one frozen state, one result and one
``compute_*`` per step. Every compute raises ValueError with a message for bad settings.

    compute_sinusoidal(SinusoidalState(n=1_000_000)).rows.size == HEATMAP_ROWS
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from core.maths import positional as pos
from core.maths.explain import num

HEATMAP_ROWS = 512  # longer sequences are shown as this many evenly spaced positions


# --- 1. Word order is invisible ------------------------------------------------------------------
ORDER_WIDTH = 8  # embedding width of the word-order demo
MAX_WORDS = 32
ENCODINGS = {  # key: (name in the menu, what it does)
    "none": ("none", "no position information: each word is its embedding alone"),
    "sinusoidal": ("sinusoidal", "sinusoidal encoding, added to the embeddings"),
    "rope": ("RoPE", "rotary encoding: turns queries and keys by their positions"),
}


@dataclass(frozen=True)
class OrderState:
    sentence_a: str = "dog bites man"
    sentence_b: str = "man bites dog"
    encoding: str = "none"  # a key of ENCODINGS


def compute_order(s: OrderState) -> pos.PermutationTrace:
    if len(s.sentence_a.split()) > MAX_WORDS:
        raise ValueError(f"Use at most {MAX_WORDS} words so the weights stay readable.")
    rng = np.random.default_rng(0)
    return pos.permutation_attention(s.sentence_a, s.sentence_b, ORDER_WIDTH, rng, s.encoding)


# --- 2. Sinusoidal encoding ------------------------------------------------------------------------
CURVE_POSITIONS = 64
MAX_OFFSET = 128
CURVES = 4  # pairs drawn as curves


@dataclass(frozen=True)
class SinusoidalState:
    n: int = 128
    d: int = 64
    base: float = pos.ROPE_BASE


@dataclass(frozen=True)
class SinusoidalResult:
    rows: np.ndarray  # (r,) the positions shown as heatmap rows
    table: np.ndarray  # (r, d)
    curve_positions: np.ndarray  # (c,)
    curve_pairs: np.ndarray  # (k,) pair index of each plotted curve
    curves: np.ndarray  # (c, k) sin(p·ω_i) of those pairs
    offsets: np.ndarray  # (o,)
    offset_dot: np.ndarray  # (o,)
    freqs: np.ndarray  # (d/2,) ω_i
    n: int


def compute_sinusoidal(s: SinusoidalState) -> SinusoidalResult:
    rows = pos.sample_positions(s.n, HEATMAP_ROWS)
    table = pos.sinusoidal_at(rows, s.d, s.base)
    curve_positions = np.arange(min(s.n, CURVE_POSITIONS))
    pairs = np.unique([0, s.d // 16, s.d // 8, s.d // 4])[:CURVES]
    pairs = pairs[pairs < s.d // 2]
    curves = pos.sinusoidal_at(curve_positions, s.d, s.base)[:, 2 * pairs]
    reach = min(s.n - 1, MAX_OFFSET)
    offsets = np.arange(-reach, reach + 1)
    dots = pos.sinusoidal_offset_dot(offsets, s.d, s.base)
    freqs = pos.frequencies(s.d, s.base)
    return SinusoidalResult(rows, table, curve_positions, pairs, curves, offsets, dots, freqs, s.n)


# --- 3. Learned table ------------------------------------------------------------------------------
TABLE_WIDTH = 16
MAX_TABLE_ROWS = 100_000


@dataclass(frozen=True)
class TableState:
    rows: int = 1024
    length: int = 1024


@dataclass(frozen=True)
class TableResult:
    table: pos.LearnedTable
    vectors: np.ndarray  # (covered, TABLE_WIDTH) the rows the sequence gets
    missing: pos.PositionOutOfRange | None
    length: int


def compute_table(s: TableState) -> TableResult:
    table = pos.learned_table(s.rows, TABLE_WIDTH, np.random.default_rng(0))
    try:
        return TableResult(table, table.embed(s.length), None, s.length)
    except pos.PositionOutOfRange as missing:
        return TableResult(table, table.embed(table.rows), missing, s.length)


# --- 4. RoPE clock hands ---------------------------------------------------------------------------
MAX_DIALS = 16
SCORE_OFFSETS = 48


@dataclass(frozen=True)
class RopeState:
    d: int = 8
    base: float = pos.ROPE_BASE
    m: int = 5
    n: int = 2
    shift: int = 0
    seed: int = 0


@dataclass(frozen=True)
class RopeResult:
    q: np.ndarray  # (d,)
    k: np.ndarray  # (d,)
    pairs: np.ndarray  # (dials,) pair index drawn on each dial
    freqs: np.ndarray  # (d/2,)
    m: float  # query position including the shift
    n: float  # key position including the shift
    score: float  # rope(q, m)·rope(k, n)
    at_start: float  # the same offset with the earlier token at position 0
    offsets: np.ndarray  # (o,)
    by_offset: np.ndarray  # (o,) score as a function of m − n
    base: float


def compute_rope(s: RopeState) -> RopeResult:
    freqs = pos.frequencies(s.d, s.base)
    q, k = np.random.default_rng(s.seed).normal(size=(2, s.d))
    pairs = np.unique(np.round(np.linspace(0, s.d // 2 - 1, min(s.d // 2, MAX_DIALS))))
    m, n = s.m + s.shift, s.n + s.shift
    score = float(pos.rope_score(q, k, m, n, s.base))
    first = min(s.m, s.n)
    at_start = float(pos.rope_score(q, k, s.m - first, s.n - first, s.base))
    offsets = np.arange(-SCORE_OFFSETS, SCORE_OFFSETS + 1)
    by_offset = pos.rope_score(q, k, SCORE_OFFSETS + offsets, SCORE_OFFSETS, s.base)
    return RopeResult(q, k, pairs.astype(int), freqs, m, n, score, at_start, offsets, by_offset, s.base)


# --- 5. Past the trained length --------------------------------------------------------------------
METHODS = {
    "none": ("plain RoPE", "#d62728"),
    "interpolation": ("position interpolation", "#1f77b4"),
    "ntk": ("NTK-aware", "#9467bd"),
    "yarn": ("YaRN", "#2ca02c"),
}  # method: (name, colour)


@dataclass(frozen=True)
class ExtensionState:
    d: int = 128
    base: float = pos.ROPE_BASE
    trained: int = 4096
    target: int = 32768
    pair: int = 63
    method: str = "yarn"  # a key of METHODS


@dataclass(frozen=True)
class ExtensionResult:
    freqs: dict[str, np.ndarray]  # method -> (d/2,)
    overshoot: dict[str, np.ndarray]  # method -> (d/2,)
    unseen: dict[str, np.ndarray]  # method -> (d/2,) bool
    turned: np.ndarray  # (d/2,) bool: the pair made a full turn in training
    pair: int  # the followed pair, within the d/2 pairs
    positions: np.ndarray  # (p,) along the target context
    state: ExtensionState


def compute_extension(s: ExtensionState) -> ExtensionResult:
    w = pos.frequencies(s.d, s.base)
    freqs = {m: pos.extended_frequencies(m, s.d, s.base, s.trained, s.target) for m in METHODS}
    over = {m: pos.overshoot(f, w, s.trained, s.target) for m, f in freqs.items()}
    unseen = {m: pos.unseen_pairs(f, w, s.trained, s.target) for m, f in freqs.items()}
    turned = s.trained * w >= 2 * np.pi
    positions = np.linspace(0, s.target - 1, 400)
    return ExtensionResult(freqs, over, unseen, turned, min(s.pair, s.d // 2 - 1), positions, s)


def extension_formula(s: ExtensionState) -> str:
    """The chosen method's angle formula with the numbers of ``s`` (several lines)."""
    scale = pos.stretch(s.trained, s.target)
    head = f"s = L′/L = {s.target:,}/{s.trained:,} = {num(scale, 3)}\n"
    if s.method == "none":
        return head + "θᵢ(p) = p·ωᵢ, ωᵢ = base^(−2i/d): unchanged"
    if s.method == "interpolation":
        return head + "θᵢ(p) = (p/s)·ωᵢ: every position squeezed into [0, L)"
    if s.method == "ntk":
        b = pos.ntk_base(s.base, s.d, s.trained, s.target)
        return head + f"base′ = base·s^(d/(d−2)) = {num(b, 0)}\nθᵢ(p) = p·base′^(−2i/d)"
    factor = pos.yarn_attention_factor(s.trained, s.target)
    return head + (
        "rᵢ = L·ωᵢ/2π full turns in training\n"
        f"γᵢ = clip((rᵢ − {pos.YARN_ALPHA:g})/({pos.YARN_BETA:g} − {pos.YARN_ALPHA:g}), 0, 1)\n"
        "ω′ᵢ = (1 − γᵢ)·ωᵢ/s + γᵢ·ωᵢ\n"
        f"scores × (0.1·ln s + 1)² = {num(factor, 3)}"
    )
