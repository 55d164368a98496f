"""Where a token sits: sinusoidal encodings, a learned table, RoPE, and stretching RoPE past
the length a model was trained on.

Positions count from 0 in arrays. Messages to the user count from 1, as people do
("no vector for position 1,025" for a 1,024-row table).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from core.maths.attention import AttentionTrace, attend

__all__ = [
    "ENCODINGS", "EXTENSION_METHODS", "ROPE_BASE", "YARN_ALPHA", "YARN_BETA", "LearnedTable",
    "PermutationTrace", "PositionOutOfRange", "extended_frequencies", "frequencies",
    "interpolate_positions", "learned_table", "ntk_base", "overshoot", "permutation_attention", "rope",
    "rope_angles", "rope_score", "sample_positions", "sinusoidal", "sinusoidal_at",
    "sinusoidal_offset_dot", "stretch", "unseen_pairs", "yarn_attention_factor", "yarn_ramp"
]  # fmt: skip

ROPE_BASE = 10000.0
YARN_ALPHA = 1.0  # pairs turning fewer than this many times in training are interpolated fully
YARN_BETA = 32.0  # pairs turning more than this many times in training are left alone
EXTENSION_METHODS = ("none", "interpolation", "ntk", "yarn")
ENCODINGS = ("none", "sinusoidal", "rope")


def _check_width(d: int) -> int:
    if int(d) != d or d < 2:
        raise ValueError(f"The width d must be a whole number of at least 2, got {d}.")
    if d % 2:
        raise ValueError(
            f"The width d = {d} is odd. Positions are encoded in pairs of dimensions "
            f"(a sine and a cosine, or the two coordinates of one clock hand), so d must be "
            f"even: try {int(d) - 1} or {int(d) + 1}."
        )
    return int(d)


def _check_base(base: float) -> float:
    if not (np.isfinite(base) and base > 1):
        raise ValueError(
            f"The base must be a number greater than 1 (10,000 is the usual choice), got {base}."
        )
    return float(base)


def _check_length(name: str, n: int) -> int:
    if int(n) != n or n < 1:
        raise ValueError(f"{name} must be a whole number of at least 1, got {n}.")
    return int(n)


def _check_positions(positions) -> np.ndarray:
    p = np.asarray(positions, dtype=np.float64)
    if not np.all(np.isfinite(p)):
        raise ValueError("Positions must be finite numbers.")
    if np.any(p < 0):
        raise ValueError("Positions count from 0; a negative position has no meaning here.")
    return p


def frequencies(d: int, base: float = ROPE_BASE) -> np.ndarray:
    """Angular speed of each pair of dimensions, ω_i = base^(−2i/d), fastest first. (d/2,)"""
    d, base = _check_width(d), _check_base(base)
    return base ** (-np.arange(0, d, 2, dtype=np.float64) / d)


def sinusoidal_at(positions, d: int, base: float = ROPE_BASE) -> np.ndarray:
    """Sinusoidal encodings of the given positions: column 2i = sin(p·ω_i), 2i+1 = cos(p·ω_i).

    positions (n,) -> (n, d). Works for any position, however large.
    """
    p = _check_positions(positions)
    if p.ndim != 1:
        raise ValueError(f"Positions must be a 1-D list, got shape {p.shape}.")
    angles = p[:, None] * frequencies(d, base)  # (n, d/2)
    out = np.empty((p.size, d))
    out[:, 0::2], out[:, 1::2] = np.sin(angles), np.cos(angles)
    return out


def sinusoidal(n: int, d: int, base: float = ROPE_BASE) -> np.ndarray:
    """The original transformer's encoding for positions 0 … n−1. (n, d)"""
    return sinusoidal_at(np.arange(_check_length("The number of positions n", n)), d, base)


def sample_positions(n: int, limit: int) -> np.ndarray:
    """Positions 0 … n−1, or ``limit`` of them evenly spaced (first and last kept) when n > limit.

    Lets a view show a million positions without building a million rows. (min(n, limit),) int
    """
    n, limit = _check_length("The number of positions n", n), _check_length("The limit", limit)
    if n <= limit:
        return np.arange(n)
    return np.unique(np.round(np.linspace(0, n - 1, limit)).astype(np.int64))


def sinusoidal_offset_dot(offsets, d: int, base: float = ROPE_BASE) -> np.ndarray:
    """PE(p)·PE(p + k) for each offset k; the same for every p: Σ_i cos(k·ω_i). (len(offsets),)"""
    k = np.asarray(offsets, dtype=np.float64)
    if not np.all(np.isfinite(k)):
        raise ValueError("Offsets must be finite numbers.")
    return np.cos(k[..., None] * frequencies(d, base)).sum(axis=-1)


class PositionOutOfRange(ValueError):
    """A learned table was asked for a position it has no row for.

    ``position`` is the first missing position, counted from 1.
    """

    def __init__(self, position: int, rows: int):
        self.position, self.rows = position, rows
        super().__init__(
            f"No vector for position {position:,}: the table has {rows:,} rows, one for each "
            f"position 1 to {rows:,}. Shorten the sequence to at most {rows:,} tokens, or use an "
            f"encoding that is computed rather than stored."
        )


@dataclass(frozen=True)
class LearnedTable:
    """One vector per position, as in GPT-2. Random here, as a model's table is before training."""

    vectors: np.ndarray  # (n_max, d)

    @property
    def rows(self) -> int:
        return self.vectors.shape[0]

    def embed(self, n: int) -> np.ndarray:
        """The vectors for a sequence of n tokens; PositionOutOfRange past the last row. (n, d)"""
        n = _check_length("The sequence length", n)
        if n > self.rows:
            raise PositionOutOfRange(self.rows + 1, self.rows)
        return self.vectors[:n]


def learned_table(n_max: int, d: int, rng: np.random.Generator) -> LearnedTable:
    """A position table of n_max rows, random normal with std 0.02 as Hugging Face's GPT-2 starts it
    (the original GPT-2 code drew its position table with std 0.01)."""
    n_max = _check_length("The number of table rows", n_max)
    d = _check_length("The width d", d)
    return LearnedTable(rng.normal(0.0, 0.02, size=(n_max, d)))


def rope_angles(positions, d: int, base: float = ROPE_BASE, freqs=None) -> np.ndarray:
    """Angle of each pair at each position, θ = p·ω_i. positions (...) -> (..., d/2)

    ``freqs`` (d/2,) replaces the standard ω_i (see ``extended_frequencies``).
    """
    p = _check_positions(positions)
    w = frequencies(d, base) if freqs is None else np.asarray(freqs, dtype=np.float64)
    if w.shape != (d // 2,):
        raise ValueError(f"Need one frequency per pair ({d // 2}), got shape {w.shape}.")
    return p[..., None] * w


def rope(x, positions, base: float = ROPE_BASE, freqs=None) -> np.ndarray:
    """Rotary position embedding: turn each consecutive pair (x_2i, x_2i+1) by p·ω_i.

    x (..., d), positions broadcastable to x.shape[:-1] -> (..., d). Norms are unchanged.
    """
    x = np.asarray(x, dtype=np.float64)
    if x.ndim == 0 or not np.all(np.isfinite(x)):
        raise ValueError("RoPE needs a vector (or rows of vectors) of finite numbers.")
    d = _check_width(x.shape[-1])
    theta = rope_angles(np.broadcast_to(positions, x.shape[:-1]), d, base, freqs)  # (..., d/2)
    cos, sin = np.cos(theta), np.sin(theta)
    even, odd = x[..., 0::2], x[..., 1::2]
    out = np.empty_like(x)
    out[..., 0::2] = even * cos - odd * sin
    out[..., 1::2] = even * sin + odd * cos
    return out


def rope_score(q, k, m, n, base: float = ROPE_BASE) -> np.ndarray:
    """q rotated to position m dotted with k rotated to position n; broadcasts over m and n."""
    m, n = np.broadcast_arrays(np.asarray(m, dtype=np.float64), np.asarray(n, dtype=np.float64))
    q = np.broadcast_to(np.asarray(q, dtype=np.float64), (*m.shape, np.shape(q)[-1]))
    k = np.broadcast_to(np.asarray(k, dtype=np.float64), (*n.shape, np.shape(k)[-1]))
    return np.sum(rope(q, m, base) * rope(k, n, base), axis=-1)


def stretch(trained_len: int, target_len: int) -> float:
    """The extension factor s = target_len / trained_len (at least 1)."""
    trained_len = _check_length("The trained length", trained_len)
    target_len = _check_length("The target length", target_len)
    if target_len < trained_len:
        raise ValueError(
            f"The target length ({target_len:,}) is shorter than the trained length "
            f"({trained_len:,}); nothing needs stretching."
        )
    return target_len / trained_len


def interpolate_positions(positions, trained_len: int, target_len: int) -> np.ndarray:
    """Position interpolation: divide positions by s = target_len/trained_len.

    Positions 0 … target_len−1 land in [0, trained_len). Same shape as positions.
    """
    return _check_positions(positions) / stretch(trained_len, target_len)


def ntk_base(base: float, d: int, trained_len: int, target_len: int) -> float:
    """NTK-aware scaling: a larger base, base·s^(d/(d−2)) with s = target/trained, so the slowest
    pair slows by exactly s while the fastest pair keeps its speed."""
    base, d = _check_base(base), _check_width(d)
    if d == 2:
        raise ValueError("NTK scaling needs at least two pairs (d ≥ 4).")
    s = stretch(trained_len, target_len)
    return base * s ** (d / (d - 2))


def yarn_ramp(d: int, base: float, trained_len: int) -> np.ndarray:
    """YaRN's blend per pair: 0 = interpolate fully, 1 = keep the original speed. (d/2,)

    Decided by how many full turns r = trained_len·ω_i/2π the pair makes during training.
    """
    turns = _check_length("The trained length", trained_len) * frequencies(d, base) / (2 * np.pi)
    return np.clip((turns - YARN_ALPHA) / (YARN_BETA - YARN_ALPHA), 0.0, 1.0)


def yarn_attention_factor(trained_len: int, target_len: int) -> float:
    """YaRN's logit sharpening: scores are multiplied by (0.1·ln s + 1)², s = target/trained."""
    s = stretch(trained_len, target_len)
    return (0.1 * np.log(s) + 1.0) ** 2


def extended_frequencies(method: str, d: int, base: float, trained_len: int, target_len: int) -> np.ndarray:
    """Per-pair speeds a model uses on a target_len context under each extension method. (d/2,)

    none: unchanged. interpolation: all slowed by s (the angles of ``interpolate_positions``).
    ntk: the speeds of a larger base (``ntk_base``). yarn: blend of the two by ``yarn_ramp``.
    """
    w = frequencies(d, base)
    s = stretch(trained_len, target_len)
    if method == "none":
        return w
    if method == "interpolation":
        return w / s
    if method == "ntk":
        return frequencies(d, ntk_base(base, d, trained_len, target_len))
    if method == "yarn":
        ramp = yarn_ramp(d, base, trained_len)
        return (1.0 - ramp) * w / s + ramp * w
    raise ValueError(f"Unknown extension method {method!r}; choose one of {EXTENSION_METHODS}.")


def overshoot(freqs, trained_freqs, trained_len: int, target_len: int) -> np.ndarray:
    """Per pair: angle reached at the last target position ÷ the angle at trained_len. (d/2,)

    Above 1 means the pair turns further than training ever took it (unless it already made a
    full turn in training, see ``unseen_pairs``).
    """
    stretch(trained_len, target_len)
    reached = (target_len - 1) * np.asarray(freqs, dtype=np.float64)
    return reached / (trained_len * np.asarray(trained_freqs, dtype=np.float64))


def unseen_pairs(freqs, trained_freqs, trained_len: int, target_len: int) -> np.ndarray:
    """Pairs whose angle on the target context goes past anything seen in training. (d/2,) bool

    A pair that completed a full turn in training has seen every angle; any other pair has
    only seen angles below trained_len·ω_i (positions 0 … trained_len − 1, and between).
    """
    turned = trained_len * np.asarray(trained_freqs, dtype=np.float64) >= 2 * np.pi
    return ~turned & (overshoot(freqs, trained_freqs, trained_len, target_len) > 1)


@dataclass(frozen=True)
class PermutationTrace:
    """The same words in two orders, attended with or without position information."""

    words_a: tuple[str, ...]
    words_b: tuple[str, ...]
    where_in_b: np.ndarray  # (n,) int: word i of sentence a sits at where_in_b[i] in sentence b
    a: AttentionTrace
    b: AttentionTrace
    b_in_a_order: np.ndarray  # (n, n) b's weights re-indexed into sentence a's word order
    difference: float  # max |a.weights − b_in_a_order|: 0 (to rounding) means order is invisible


def _matching(words_a: list[str], words_b: list[str]) -> np.ndarray:
    if sorted(words_a) != sorted(words_b):
        raise ValueError(
            "The second sentence must use exactly the same words as the first, in another order "
            f"(got {' '.join(words_a)!r} and {' '.join(words_b)!r})."
        )
    free = list(range(len(words_b)))
    where = []
    for word in words_a:
        j = next(j for j in free if words_b[j] == word)
        free.remove(j)
        where.append(j)
    return np.array(where)


def permutation_attention(
    sentence_a: str, sentence_b: str, d: int, rng: np.random.Generator, encoding: str = "none"
) -> PermutationTrace:
    """Self-attention over two orderings of the same words with shared random embeddings and
    projections; encoding is "none", "sinusoidal" (added to embeddings) or "rope" (turns Q, K)."""
    words_a, words_b = sentence_a.split(), sentence_b.split()
    if not words_a:
        raise ValueError("Type a sentence of at least one word.")
    where = _matching(words_a, words_b)
    d = _check_width(d)
    if encoding not in ENCODINGS:
        raise ValueError(f"Unknown encoding {encoding!r}; choose one of {ENCODINGS}.")
    vocab = sorted(set(words_a))
    table = dict(zip(vocab, rng.normal(size=(len(vocab), d)), strict=True))
    W_Q, W_K, W_V = (rng.normal(size=(d, d)) / np.sqrt(d) for _ in range(3))

    def self_attention(words: list[str]) -> AttentionTrace:
        X = np.array([table[w] for w in words])  # (n, d)
        if encoding == "sinusoidal":
            X = X + sinusoidal(len(words), d)
        Q, K = X @ W_Q, X @ W_K
        if encoding == "rope":
            pos = np.arange(len(words))
            Q, K = rope(Q, pos), rope(K, pos)
        return attend(Q, K, X @ W_V)

    a, b = self_attention(words_a), self_attention(words_b)
    b_in_a_order = b.weights[np.ix_(where, where)]
    diff = float(np.max(np.abs(a.weights - b_in_a_order)))
    return PermutationTrace(tuple(words_a), tuple(words_b), where, a, b, b_in_a_order, diff)
