import numpy as np
import pytest

from core.maths import explain
from core.maths.attention import attend
from core.maths.masks import causal
from core.maths.qkv import random_example, retokenize, tokenize, vocabulary


def test_default_example_is_the_articles():
    ex = random_example(tokenize("the cat sat down"), 8, 4, 0)
    rng = np.random.default_rng(0)
    X = rng.normal(size=(4, 8))
    W_Q, W_K, W_V = (rng.normal(size=(8, 4)) for _ in range(3))
    np.testing.assert_array_equal(ex.X, X)
    for got, want in zip(ex.projections(), (X @ W_Q, X @ W_K, X @ W_V), strict=True):
        np.testing.assert_array_equal(got, want)


def test_a_repeated_token_has_one_vector_whatever_surrounds_it():
    ex = random_example(tokenize("the cat saw the dog"), 6, 3, 1)
    np.testing.assert_array_equal(ex.X[0], ex.X[3])
    longer = retokenize(ex, tokenize("the dog saw the cat again"), 1)
    np.testing.assert_array_equal(longer.X[0], ex.X[0])
    np.testing.assert_array_equal(longer.X[1], ex.X[4])  # "dog" kept its row
    assert vocabulary(["a", "b", "a"])[1].tolist() == [0, 1, 0]


@pytest.mark.parametrize(
    "text, message",
    [("", "at least one token"), ("   ", "at least one token"), (" ".join(["w"] * 500), "at most 64")],
)
def test_tokenize_rejects_empty_and_huge(text, message):
    with pytest.raises(ValueError, match=message):
        tokenize(text)


@pytest.mark.parametrize("d_model, d_k", [(0, 4), (8, 0), (8, -1)])
def test_zero_or_negative_sizes_are_refused(d_model, d_k):
    with pytest.raises(ValueError, match="at least 1"):
        random_example(["a"], d_model, d_k, 0)


def test_explanations_contain_the_real_numbers():
    Q = np.array([[1.0, -2.0]])
    K = np.array([[0.5, 0.25], [1.0, 1.0]])
    V = np.array([[1.0], [3.0]])
    t = attend(Q, K, V, mask=np.array([[True, False]]))
    assert explain.dot_terms(Q[0], K[0]) == "1.00×0.50 + (−2.00)×0.25 = 0.00"
    assert explain.score(Q, K, 0, 1) == "Q[0] · K[1] = 1.00×1.00 + (−2.00)×1.00 = −1.00"
    assert explain.scaled(t, 0, 0) == "0.000 ÷ 1.414 = 0.000"
    assert explain.weight(t, 0, 1) == "hidden by the mask: exp(−∞) = 0"
    assert explain.weight(t, 0, 0).endswith("= 1.0000")
    assert explain.blend(t, V, 0, 0) == "Σⱼ w[0, j]·V[j, 0] = 1.00×1.00 + 0.00×3.00 = 1.00"
    assert explain.projection(Q[0], K.T, 1, "x", "W") == "x · W[:, 1] = 1.00×1.00 + (−2.00)×1.00 = −1.00"


def test_long_sums_are_shortened_and_numbers_formatted():
    text = explain.dot_terms(np.ones(20), np.ones(20))
    assert "…" in text and text.endswith("= 20.00")
    assert [explain.num(v) for v in (-0.001, -np.inf, np.nan, 1.234)] == ["0.00", "−∞", "–", "1.23"]


def test_empty_row_explanation():
    t = attend(np.ones((2, 1)), np.ones((2, 1)), np.ones((2, 1)), mask=~causal(2))
    assert explain.weight(t, 0, 0) == "hidden by the mask: exp(−∞) = 0"
    assert "every key is hidden" in explain.weight(t, 1, 0)
