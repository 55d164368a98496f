"""Linear attention: softmax's exp(q·k) replaced by a dot product of features, φ(q)·φ(k).

Once the weight of key j for query i is φ(q_i)·φ(k_j), the brackets can move:

    softmax:  (Q·Kᵀ)·V          an n × n matrix of weights first: n²·d multiply-adds
    linear:   φ(Q)·(φ(K)ᵀ·V)    an m × d_v state first:           n·m·d_v multiply-adds

each row divided by its normaliser φ(q_i)·Σ_j φ(k_j). Causal, the state is a running sum
S_t = S_{t−1} + φ(k_t)·v_tᵀ (with z_t = z_{t−1} + φ(k_t)), so a decoder keeps m × d_v numbers per
head however long the text grows. Shapes: n tokens, features of width m, values of width d_v.

    Qf, Kf = features("elu", Q), features("elu", K)
    parallel(Qf, Kf, V, causal=True)  ==  recurrent(Qf, Kf, V)  ==  chunked(Qf, Kf, V, 2)
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

__all__ = [
    "DRAWS", "FEATURES_RANGE", "FEATURE_MAPS", "LENGTH_RANGE", "Bracket", "OpCounts", "bracket",
    "causal_check", "chunked", "elu_plus_one", "favor", "favor_weights", "feature_error", "feature_weights",
    "features", "kernel_inputs", "op_counts", "parallel", "random_directions", "recurrent", "seeded_inputs",
    "state_at",
]  # fmt: skip

FEATURE_MAPS = {"elu": "elu + 1", "relu": "ReLU", "favor": "random features (FAVOR+)"}
FEATURES_RANGE = (1, 4_096)  # random features m
LENGTH_RANGE = (1, 8_192)  # tokens in a check of the causal forms
DRAWS = 20  # draws of the random directions a feature-map error is averaged over


def elu_plus_one(x: np.ndarray) -> np.ndarray:
    """elu(x) + 1: x + 1 above 0, eˣ below; always positive (Katharopoulos et al., 2020)."""
    x = np.asarray(x, dtype=np.float64)
    return np.where(x > 0, x + 1.0, np.exp(np.minimum(x, 0.0)))


def random_directions(m: int, d: int, seed: int) -> np.ndarray:
    """(m, d) standard normal rows ω, the random features' directions."""
    return np.random.default_rng(seed).normal(size=(m, d))


def _log_favor(x: np.ndarray, omega: np.ndarray) -> np.ndarray:
    """ω·x − |x|²/2: the logarithm of FAVOR+'s features before the 1/√m. (…, n, m)"""
    x = np.asarray(x, dtype=np.float64)
    return x @ np.swapaxes(omega, -1, -2) - 0.5 * np.sum(x * x, axis=-1, keepdims=True)


def favor(x: np.ndarray, omega: np.ndarray) -> np.ndarray:
    """Positive random features (Performer's FAVOR+): x (n, d), ω (m, d) → (n, m)
    exp(ω·x − |x|²/2)/√m; ω (draws, m, d) gives (draws, n, m). For ω drawn from N(0, I),
    E[φ(q)·φ(k)] = exp(q·k) exactly."""
    return np.exp(_log_favor(x, omega)) / np.sqrt(omega.shape[-2])


def favor_weights(q: np.ndarray, k: np.ndarray, omega: np.ndarray) -> np.ndarray:
    """The weights random features give, (n_q, n_k), or (draws, n_q, n_k) for ω (draws, m, d):
    feature_weights(favor(q, ω), favor(k, ω)) computed in logs, each query's features scaled by
    their largest and the keys' by theirs, factors that every row's division cancels. So sharp
    rows (large q, k) give weights, not inf / inf."""
    log_q, log_k = _log_favor(q, omega), _log_favor(k, omega)  # (…, n_q, m), (…, n_k, m)
    log_q = log_q - log_q.max(axis=-1, keepdims=True)
    log_k = log_k - log_k.max(axis=(-2, -1), keepdims=True)
    scores = np.exp(log_q) @ np.swapaxes(np.exp(log_k), -1, -2)
    total = scores.sum(axis=-1, keepdims=True)
    return np.divide(scores, total, out=np.zeros_like(scores), where=total > 0)


def features(name: str, x: np.ndarray, omega: np.ndarray | None = None) -> np.ndarray:
    """φ(x) for a key of FEATURE_MAPS; "favor" needs the directions ``omega`` (m, d)."""
    if name == "elu":
        return elu_plus_one(x)
    if name == "relu":
        return np.maximum(np.asarray(x, dtype=np.float64), 0.0)
    if name == "favor":
        if omega is None:
            raise ValueError("Random features need their directions (omega).")
        return favor(x, omega)
    raise ValueError(f"Unknown feature map {name!r}; choose one of {', '.join(FEATURE_MAPS)}.")


def kernel_inputs(Q: np.ndarray, K: np.ndarray, temperature: float = 1.0) -> tuple[np.ndarray, np.ndarray]:
    """Q and K each divided by (√d·T)^½, so that exp(q'·k') = exp(q·k / (√d·T)): the softmax
    kernel the random features estimate. (n, d) each."""
    scale = (np.sqrt(Q.shape[-1]) * temperature) ** -0.5
    return np.asarray(Q, dtype=np.float64) * scale, np.asarray(K, dtype=np.float64) * scale


def _rows(numerator: np.ndarray, normaliser: np.ndarray) -> np.ndarray:
    """numerator (n, k) / normaliser (n,), a row whose normaliser is 0 left at 0 (ReLU features
    of a query and every key it may see can share no direction)."""
    normaliser = normaliser[:, None]
    return np.divide(numerator, normaliser, out=np.zeros_like(numerator), where=normaliser > 0)


def feature_weights(Qf: np.ndarray, Kf: np.ndarray, causal: bool = False) -> np.ndarray:
    """(n_q, n_k) weights φ(q_i)·φ(k_j) / Σ_j φ(q_i)·φ(k_j), the n × n matrix linear attention
    never builds; causal hides j > i."""
    scores = Qf @ Kf.T
    if causal:
        scores = np.tril(scores)
    return _rows(scores, scores.sum(axis=1))


def parallel(Qf: np.ndarray, Kf: np.ndarray, V: np.ndarray, causal: bool = False) -> np.ndarray:
    """(n, d_v) the weights above times V: the quadratic form, the one to check the others by."""
    return feature_weights(Qf, Kf, causal) @ V


@dataclass(frozen=True)
class Bracket:
    """Non-causal linear attention with the brackets moved."""

    state: np.ndarray  # (m, d_v) S = φ(K)ᵀ·V
    sum_keys: np.ndarray  # (m,) z = Σ_j φ(k_j)
    normaliser: np.ndarray  # (n,) φ(q_i)·z
    output: np.ndarray  # (n, d_v) φ(Q)·S / normaliser


def bracket(Qf: np.ndarray, Kf: np.ndarray, V: np.ndarray) -> Bracket:
    """φ(Q)·(φ(K)ᵀ·V), each row divided by φ(q_i)·Σφ(k): no n × n matrix anywhere."""
    state, sum_keys = Kf.T @ V, Kf.sum(axis=0)
    normaliser = Qf @ sum_keys
    return Bracket(state, sum_keys, normaliser, _rows(Qf @ state, normaliser))


def state_at(Kf: np.ndarray, V: np.ndarray, t: int) -> tuple[np.ndarray, np.ndarray]:
    """The running state after token t (from 0): S_t (m, d_v) and z_t (m,)."""
    return Kf[: t + 1].T @ V[: t + 1], Kf[: t + 1].sum(axis=0)


def recurrent(Qf: np.ndarray, Kf: np.ndarray, V: np.ndarray) -> np.ndarray:
    """(n, d_v) causal linear attention one token at a time, as a decoder generates:
    S += φ(k_t)·v_tᵀ, z += φ(k_t), then out_t = φ(q_t)·S / φ(q_t)·z."""
    state, sum_keys = np.zeros((Kf.shape[1], V.shape[1])), np.zeros(Kf.shape[1])
    out = np.zeros((Qf.shape[0], V.shape[1]))
    for t in range(Qf.shape[0]):
        state += np.outer(Kf[t], V[t])
        sum_keys += Kf[t]
        out[t] = _rows((Qf[t] @ state)[None], np.array([Qf[t] @ sum_keys]))[0]
    return out


def chunked(Qf: np.ndarray, Kf: np.ndarray, V: np.ndarray, chunk: int) -> np.ndarray:
    """(n, d_v) causal linear attention a chunk of tokens at a time: inside a chunk the small
    masked (chunk × chunk) form, from earlier chunks the state. How it is trained on a GPU."""
    if chunk < 1:
        raise ValueError(f"A chunk holds at least 1 token, not {chunk}.")
    state, sum_keys = np.zeros((Kf.shape[1], V.shape[1])), np.zeros(Kf.shape[1])
    out = np.zeros((Qf.shape[0], V.shape[1]))
    for start in range(0, Qf.shape[0], chunk):
        q, k, v = (a[start : start + chunk] for a in (Qf, Kf, V))
        inside = np.tril(q @ k.T)  # (c, c) this chunk's keys, causal
        numerator = q @ state + inside @ v
        out[start : start + chunk] = _rows(numerator, q @ sum_keys + inside.sum(axis=1))
        state += k.T @ v
        sum_keys += k.sum(axis=0)
    return out


def feature_error(Q: np.ndarray, K: np.ndarray, m: int, seed: int, temperature: float = 1.0) -> float:
    """Mean |weight error| of m random features against softmax(Q·Kᵀ/(√d·T)), over DRAWS
    seeded draws of the directions (seeds seed … seed + DRAWS − 1; non-causal, every row)."""
    from core.maths.attention import attend

    exact = attend(Q, K, K, temperature=temperature).weights
    q, k = kernel_inputs(Q, K, temperature)
    omega = np.stack(
        [random_directions(m, Q.shape[1], seed + draw) for draw in range(DRAWS)]
    )  # (DRAWS, m, d)
    scores = favor(q, omega) @ favor(k, omega).transpose(0, 2, 1)  # (DRAWS, n, n)
    weights = scores / scores.sum(axis=2, keepdims=True)  # positive features: no row sums to 0
    return float(np.abs(weights - exact).mean())


def seeded_inputs(length: int, dim: int, seed: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """elu + 1 features of normal Q and K, and normal V, each (length, dim), seeded."""
    rng = np.random.default_rng(seed)
    Qf, Kf = (elu_plus_one(rng.normal(size=(length, dim))) for _ in range(2))
    return Qf, Kf, rng.normal(size=(length, dim))


def causal_check(Qf: np.ndarray, Kf: np.ndarray, V: np.ndarray, chunk: int) -> dict[str, float]:
    """Largest |difference| of the recurrent and chunked forms from the parallel one."""
    exact = parallel(Qf, Kf, V, causal=True)
    return {
        "recurrent": float(np.abs(recurrent(Qf, Kf, V) - exact).max()),
        "chunked": float(np.abs(chunked(Qf, Kf, V, chunk) - exact).max()),
    }


@dataclass(frozen=True)
class OpCounts:
    """Multiply-adds of one head over n tokens (key width d, features m, values d_v)."""

    softmax: int  # Q·Kᵀ and weights·V: 2·n²·d (d_v = d)
    linear: int  # φ(K)ᵀ·V and φ(Q)·S: 2·n·m·d_v, plus the normalisers' 2·n·m
    crossover: int  # the shortest n at which linear needs fewer


def op_counts(n: int, d: int, m: int | None = None) -> OpCounts:
    """Softmax against linear attention at length n, values as wide as keys, m = d features
    unless given. Linear wins once 2n²d > 2nm(d + 1), i.e. n > m(d + 1)/d."""
    m = d if m is None else m
    crossover = m * (d + 1) // d + 1
    return OpCounts(2 * n * n * d, 2 * n * m * (d + 1), crossover)
