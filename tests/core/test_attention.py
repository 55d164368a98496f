import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from core.maths.attention import attend, softmax
from core.maths.masks import causal
from core.maths.stats import entropy

finite = st.floats(-1e3, 1e3, allow_nan=False, allow_infinity=False)


@st.composite
def qkv(draw):
    n_q, n_k = draw(st.integers(1, 7)), draw(st.integers(1, 7))
    d_k, d_v = draw(st.integers(1, 6)), draw(st.integers(1, 6))
    Q = draw(arrays(np.float64, (n_q, d_k), elements=finite))
    K = draw(arrays(np.float64, (n_k, d_k), elements=finite))
    V = draw(arrays(np.float64, (n_k, d_v), elements=finite))
    return Q, K, V


def article_example():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(4, 8))
    W_Q, W_K, W_V = (rng.normal(size=(8, 4)) for _ in range(3))
    return X @ W_Q, X @ W_K, X @ W_V


def test_article_numpy_example_reproduces():
    trace = attend(*article_example())
    expected = [
        [0.38, 0.13, 0.46, 0.03],
        [0.01, 0.0, 0.13, 0.86],
        [0.91, 0.0, 0.08, 0.0],
        [0.01, 0.25, 0.08, 0.66],
    ]
    np.testing.assert_allclose(np.round(trace.weights, 2), expected)
    np.testing.assert_allclose(np.round(trace.output[1], 2), [0.94, -0.4, -0.03, 0.59])


def test_steps_are_consistent():
    Q, K, V = article_example()
    t = attend(Q, K, V, temperature=0.5)
    np.testing.assert_allclose(t.scores, Q @ K.T)
    np.testing.assert_allclose(t.scaled, Q @ K.T / (2.0 * 0.5))
    np.testing.assert_allclose(attend(Q, K, V, scale=False).scaled, Q @ K.T)
    np.testing.assert_allclose(t.output, t.weights @ V)


@settings(max_examples=60, deadline=None)
@given(qkv(), st.floats(0.01, 100))
def test_rows_sum_to_one_and_entropy_bounded(data, temperature):
    Q, K, V = data
    t = attend(Q, K, V, temperature=temperature)
    assert np.all(np.isfinite(t.weights)) and np.all(np.isfinite(t.output))
    np.testing.assert_allclose(t.weights.sum(axis=1), 1.0, atol=1e-12)
    assert np.all(entropy(t.weights) <= np.log(K.shape[0]) + 1e-9)


@settings(max_examples=40, deadline=None)
@given(st.integers(1, 9), st.integers(0, 2**31))
def test_causal_weights_above_diagonal_are_exactly_zero(n, seed):
    rng = np.random.default_rng(seed)
    Q, K, V = (rng.normal(size=(n, 3)) * 50 for _ in range(3))
    w = attend(Q, K, V, mask=causal(n)).weights
    assert np.all(w[np.triu_indices(n, 1)] == 0.0)
    np.testing.assert_allclose(w.sum(axis=1), 1.0)


def test_fully_masked_row_gives_zeros_not_nan():
    Q, K, V = article_example()
    mask = np.ones((4, 4), dtype=bool)
    mask[2] = False
    t = attend(Q, K, V, mask=mask)
    assert np.all(t.weights[2] == 0) and np.all(t.output[2] == 0)
    assert np.all(np.isfinite(t.weights)) and np.all(np.isfinite(t.output))


def test_softmax_is_safe_for_huge_scores():
    w = softmax(np.array([[1e308, 1e308, -1e308], [-np.inf, -np.inf, -np.inf]]))
    np.testing.assert_allclose(w, [[0.5, 0.5, 0.0], [0.0, 0.0, 0.0]])


def test_softmax_saturation_example():
    np.testing.assert_allclose(np.round(softmax(np.array([1.0, 2, 3])), 2), [0.09, 0.24, 0.67])
    np.testing.assert_allclose(np.round(softmax(8 * np.array([1.0, 2, 3])), 2), [0.0, 0.0, 1.0])


@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({"temperature": 0.0}, "Temperature"),
        ({"temperature": float("nan")}, "Temperature"),
        ({"mask": np.ones((2, 2), dtype=bool)}, "Mask shape"),
    ],
)
def test_bad_arguments_raise_clear_errors(kwargs, message):
    with pytest.raises(ValueError, match=message):
        attend(*article_example(), **kwargs)


def test_non_finite_input_is_named():
    Q, K, V = article_example()
    Q[0, 0] = np.nan
    with pytest.raises(ValueError, match="Q contains NaN"):
        attend(Q, K, V)
    with pytest.raises(ValueError, match="d_k must be at least 1"):
        attend(np.zeros((2, 0)), np.zeros((2, 0)), np.zeros((2, 1)))


@settings(max_examples=30, deadline=None)
@given(qkv(), st.booleans())
def test_matches_torch_sdpa(data, use_causal):
    torch = pytest.importorskip("torch")
    Q, K, V = data
    mask = causal(Q.shape[0])[:, : K.shape[0]] if use_causal and Q.shape == K.shape else None
    ours = attend(Q, K, V, mask=mask).output
    theirs = torch.nn.functional.scaled_dot_product_attention(
        *(torch.from_numpy(m) for m in (Q, K, V)),
        attn_mask=None if mask is None else torch.from_numpy(mask),
    ).numpy()
    np.testing.assert_allclose(ours, theirs, atol=1e-6, rtol=1e-6)
