import numpy as np
import pytest

from core.maths.attention import attend
from core.maths.linear import (
    bracket,
    chunked,
    elu_plus_one,
    favor,
    feature_weights,
    features,
    kernel_inputs,
    op_counts,
    parallel,
    random_directions,
    recurrent,
    state_at,
)
from core.maths.qkv import random_example


def problem(n=11, d=5, d_v=3, seed=0):
    rng = np.random.default_rng(seed)
    return rng.normal(size=(n, d)), rng.normal(size=(n, d)), rng.normal(size=(n, d_v))


def by_hand(Qf, Kf, V):
    """Causal linear attention written out, one query and one key at a time."""
    out = np.zeros((len(Qf), V.shape[1]))
    for i in range(len(Qf)):
        weights = [sum(Qf[i, a] * Kf[j, a] for a in range(Qf.shape[1])) for j in range(i + 1)]
        out[i] = sum(w * V[j] for j, w in enumerate(weights)) / sum(weights)
    return out


@pytest.mark.parametrize("name", ["elu", "favor"])
def test_parallel_recurrent_and_chunked_forms_agree_with_a_loop(name):
    Q, K, V = problem()
    omega = random_directions(16, Q.shape[1], seed=3)
    Qf, Kf = features(name, Q, omega), features(name, K, omega)
    expected = by_hand(Qf, Kf, V)
    np.testing.assert_allclose(parallel(Qf, Kf, V, causal=True), expected, rtol=0, atol=1e-10)
    np.testing.assert_allclose(recurrent(Qf, Kf, V), expected, rtol=0, atol=1e-10)
    for chunk in (1, 3, 4, 11, 40):
        np.testing.assert_allclose(chunked(Qf, Kf, V, chunk), expected, rtol=0, atol=1e-10)


def test_moving_the_brackets_changes_nothing_and_builds_no_n_by_n_matrix():
    Q, K, V = problem(n=9, d=4, d_v=6)
    Qf, Kf = elu_plus_one(Q), elu_plus_one(K)
    b = bracket(Qf, Kf, V)
    assert b.state.shape == (4, 6) and b.sum_keys.shape == (4,)
    np.testing.assert_allclose(b.output, parallel(Qf, Kf, V), rtol=0, atol=1e-12)
    np.testing.assert_allclose(b.normaliser, (Qf @ Kf.T).sum(axis=1), rtol=1e-12)
    S, z = state_at(Kf, V, 8)
    np.testing.assert_allclose(S, b.state, rtol=1e-12)
    np.testing.assert_allclose(z, b.sum_keys, rtol=1e-12)


def test_elu_plus_one_is_positive_and_continuous_at_zero():
    x = np.array([-50.0, -1.0, 0.0, 1e-12, 2.0])
    np.testing.assert_allclose(elu_plus_one(x), [np.exp(-50), np.exp(-1), 1.0, 1.0 + 1e-12, 3.0])


def test_relu_rows_with_no_shared_direction_get_no_weight_not_nan():
    Qf = np.array([[1.0, 0.0], [0.0, 1.0]])
    Kf = np.array([[0.0, 2.0], [0.0, 3.0]])
    w = feature_weights(Qf, Kf)
    np.testing.assert_array_equal(w[0], [0.0, 0.0])
    np.testing.assert_allclose(w[1], [0.4, 0.6])


def test_random_features_are_unbiased_for_the_softmax_kernel():
    """The mean of φ(q)·φ(k) over many draws of ω approaches exp(q·k/√d): within five standard
    errors, the errors measured from the draws themselves."""
    Q, K, _ = problem(n=3, d=4)
    Q, K = Q / 2, K / 2
    q, k = kernel_inputs(Q, K, temperature=1.0)
    estimates = np.array(
        [favor(q, w) @ favor(k, w).T for w in (random_directions(64, 4, s) for s in range(400))]
    )
    exact = np.exp(Q @ K.T / 2.0)  # √d = 2
    error = estimates.std(axis=0, ddof=1) / np.sqrt(len(estimates))
    assert (np.abs(estimates.mean(axis=0) - exact) < 5 * error).all()
    assert (error < 0.05 * exact).all()  # enough draws that the check can fail


def test_more_random_features_come_closer_to_softmax_and_sharp_rows_need_more():
    ex = random_example(["the", "cat", "sat", "down"], 8, 4, 0)
    Q, K, V = ex.projections()

    def error(m, temperature):
        exact = attend(Q, K, V, temperature=temperature).weights
        q, k = kernel_inputs(Q, K, temperature)
        errs = [
            np.abs(feature_weights(favor(q, w), favor(k, w)) - exact).mean()
            for w in (random_directions(m, 4, seed) for seed in range(20))
        ]
        return np.mean(errs)

    assert error(1024, 1.0) < error(64, 1.0) < error(8, 1.0)
    assert error(1024, 4.0) < 0.5 * error(1024, 1.0)


def test_operation_counts_and_the_length_where_linear_wins():
    c = op_counts(n=4, d=4)
    assert c.softmax == 2 * 16 * 4 and c.linear == 2 * 4 * 4 * 5
    n = c.crossover
    assert op_counts(n, 4).linear < op_counts(n, 4).softmax
    assert op_counts(n - 1, 4).linear >= op_counts(n - 1, 4).softmax
    assert op_counts(1000, 64, m=256).crossover == 261


def test_unknown_feature_map_and_missing_directions_are_refused():
    with pytest.raises(ValueError, match="choose one of"):
        features("cosine", np.ones((2, 2)))
    with pytest.raises(ValueError, match="directions"):
        features("favor", np.ones((2, 2)))
    with pytest.raises(ValueError, match="at least 1"):
        chunked(*problem(), chunk=0)


def test_cache_sizes_follow_the_published_shapes():
    from core.maths.cache_size import CACHES, cache_bytes

    shapes = {c.model: c for c in CACHES}
    assert cache_bytes(shapes["Llama 2 7B"], 1) == 32 * 2 * 32 * 128 * 2 == 512 * 1024
    assert cache_bytes(shapes["Llama 3 8B"], 1_000) == 1_000 * 128 * 1024
    assert cache_bytes(shapes["DeepSeek-V3"], 1) == 61 * 576 * 2
    mistral = shapes["Mistral 7B v0.1"]
    assert cache_bytes(mistral, 100_000) == cache_bytes(mistral, 4_096) == 4_096 * 128 * 1024
    gemma = shapes["Gemma 3 270M"]
    assert cache_bytes(gemma, 1_000) - cache_bytes(gemma, 999) == 3 * 512 * 2  # only the 3 global layers grow
    mamba = shapes["Mamba-2 2.7B"]
    assert cache_bytes(mamba, 1) == cache_bytes(mamba, 10**6) == 64 * 5_120 * 128 * 2


def test_random_feature_weights_in_logs_equal_the_plain_ratio_and_survive_sharp_rows():
    from core.maths.linear import favor_weights

    Q, K, _ = problem(n=5, d=4)
    omega = random_directions(32, 4, seed=1)
    plain = feature_weights(favor(Q, omega), favor(K, omega))
    np.testing.assert_allclose(favor_weights(Q, K, omega), plain, rtol=1e-10)
    sharp = favor_weights(40 * Q, 40 * K, omega)  # the features of these leave float64's range
    assert np.isfinite(sharp).all() and np.allclose(sharp.sum(axis=1), 1.0)
    with np.errstate(over="ignore", under="ignore", invalid="ignore"):
        plain = feature_weights(favor(40 * Q, omega), favor(40 * K, omega))
    assert not np.allclose(np.nan_to_num(plain).sum(axis=1), 1.0)  # rows lost to under- or overflow
