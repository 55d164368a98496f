import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from core.maths import scaling
from core.maths.attention import softmax

# ---------------------------------------------------------------- saturation


def test_scores_one_two_three_at_x1_and_x8():
    x1 = scaling.saturate(scaling.parse_scores("1, 2, 3"), 1)
    np.testing.assert_allclose(np.round(x1.weights, 2), [0.09, 0.24, 0.67])
    x8 = scaling.saturate(np.array([1.0, 2, 3]), 8)
    np.testing.assert_allclose(np.round(x8.weights, 2), [0.0, 0.0, 1.0])
    assert x1.winner == x8.winner == 2
    assert x1.winner_gradient == pytest.approx(0.66524096 * (1 - 0.66524096))
    assert x8.winner_gradient == pytest.approx(3.3535e-4, rel=1e-3)


def test_winner_gradient_shrinks_toward_zero_as_the_multiplier_grows():
    grads = scaling.saturation_sweep(np.array([1.0, 2, 3]), [1, 2, 4, 8, 16])
    assert np.all(np.diff(grads) < 0)
    assert grads[-1] < 1e-6 and np.all(np.isfinite(grads))


@settings(max_examples=25, deadline=None)
@given(arrays(np.float64, st.integers(1, 8), elements=st.floats(-20, 20)))
def test_jacobian_matches_finite_differences(z):
    jac = scaling.softmax_jacobian(softmax(z))
    eps = 1e-6
    numeric = np.stack(
        [(softmax(z + eps * e) - softmax(z - eps * e)) / (2 * eps) for e in np.eye(z.size)], axis=1
    )
    np.testing.assert_allclose(jac, numeric, atol=1e-7)
    np.testing.assert_allclose(jac.sum(axis=1), 0, atol=1e-12)


@pytest.mark.parametrize("text", ["1, two, 3", "", "1, nan", "inf 2", ",,"])
def test_bad_scores_are_rejected_with_a_hint(text):
    with pytest.raises(ValueError, match=r"(?i)score"):
        scaling.parse_scores(text)


def test_spaces_or_commas_both_separate_scores():
    np.testing.assert_array_equal(scaling.parse_scores("1 2,3 ,  -4.5"), [1, 2, 3, -4.5])


@pytest.mark.parametrize("multiplier", [0, -1, float("nan")])
def test_multiplier_must_be_positive(multiplier):
    with pytest.raises(ValueError, match="multiplier"):
        scaling.saturate(np.array([1.0, 2, 3]), multiplier)


def test_overflowing_scores_are_rejected():
    with pytest.raises(ValueError, match="overflow"):
        scaling.saturate(np.array([1e308, 2]), 16)


# ---------------------------------------------------------------- growth


def test_spread_reads_2_8_and_22_6_at_4_64_512():
    g = scaling.dot_product_spread([4, 64, 512], 4000, np.random.default_rng(0))
    np.testing.assert_allclose(g.spread, [2, 8, 22.6], rtol=0.05)
    np.testing.assert_allclose(g.spread_scaled, 1, rtol=0.05)
    assert g.at(64) == (g.spread[1], g.spread_scaled[1])
    with pytest.raises(ValueError, match="not measured"):
        g.at(3)


def test_spread_reports_progress_once_per_width():
    calls = []
    scaling.dot_product_spread([1, 2, 4], 10, np.random.default_rng(1), lambda *a: calls.append(a))
    assert calls == [(1, 3), (2, 3), (3, 3)]


def test_sample_count_is_capped_with_a_note_and_zero_is_refused():
    assert scaling.capped_samples(500) == (500, None)
    used, note = scaling.capped_samples(10**8)
    assert used == scaling.MAX_SAMPLES and "100,000,000" in note
    with pytest.raises(ValueError, match="at least 2"):
        scaling.capped_samples(0)
    with pytest.raises(ValueError, match="at most"):
        scaling.dot_product_spread([4], 10**8, np.random.default_rng(0))


def test_width_zero_is_refused():
    with pytest.raises(ValueError, match="d_k"):
        scaling.dot_product_spread([0, 4], 10, np.random.default_rng(0))


# ---------------------------------------------------------------- temperature


def test_article_two_per_token_table_reproduces():
    Q, K, V = scaling.random_qkv(6, 8, 0)
    r = scaling.read_temperature(Q, K, V, 1.0)
    assert r.peak_index.tolist() == [3, 4, 3, 0, 5, 5]
    np.testing.assert_allclose(np.round(r.peak_weight, 3), [0.352, 0.414, 0.269, 0.461, 0.290, 0.519])
    np.testing.assert_allclose(np.round(r.entropy, 3), [1.641, 1.612, 1.675, 1.483, 1.697, 1.323])


def test_six_token_sweep_is_what_the_six_tokens_give():
    """The article prints a sweep these inputs cannot give (entropy above ln 6); we show these."""
    Q, K, V = scaling.random_qkv(6, 8, 0)
    sweep = scaling.temperature_sweep(Q, K, V, [0.25, 0.5, 1, 2, 4])
    np.testing.assert_allclose(np.round(sweep.mean_entropy, 4), [0.5628, 1.1511, 1.5719, 1.7312, 1.7763])
    np.testing.assert_allclose(np.round(sweep.mean_peak, 4), [0.8153, 0.5963, 0.3842, 0.2675, 0.2140])
    assert np.all(sweep.mean_entropy <= np.log(6)) and np.all(sweep.mean_peak >= 1 / 6)
    assert sweep.max_entropy == pytest.approx(np.log(6))


def test_printed_sweep_reproduces_from_eight_tokens_d16_seed1():
    Q, K, V = scaling.random_qkv(8, 16, 1)
    sweep = scaling.temperature_sweep(Q, K, V, [0.25, 0.5, 1, 2, 4])
    np.testing.assert_allclose(np.round(sweep.mean_entropy, 4), [0.7926, 1.4007, 1.8555, 2.0147, 2.0613])
    np.testing.assert_allclose(np.round(sweep.mean_peak, 4), [0.7024, 0.5019, 0.3072, 0.2066, 0.1629])


def test_presets_match_their_parameters():
    table, sweep = scaling.PRESETS
    assert (table.n_tokens, table.d_k, table.seed) == (6, 8, 0)
    assert (sweep.n_tokens, sweep.d_k, sweep.seed) == (8, 16, 1)


def test_temperature_extremes_stay_finite_and_ordered():
    Q, K, V = scaling.random_qkv(6, 8, 0)
    sweep = scaling.temperature_sweep(Q, K, V, np.geomspace(0.05, 20, 30))
    assert np.all(np.isfinite(sweep.mean_entropy)) and np.all(np.isfinite(sweep.mean_peak))
    assert np.all(np.diff(sweep.mean_entropy) > 0) and np.all(np.diff(sweep.mean_peak) < 0)
    assert sweep.mean_peak[0] > 0.95 and sweep.mean_entropy[-1] > 0.99 * np.log(6)


@pytest.mark.parametrize(
    "call",
    [
        lambda: scaling.random_qkv(6, 0, 0),
        lambda: scaling.random_qkv(0, 8, 0),
        lambda: scaling.random_qkv(6, 8, -1),
        lambda: scaling.read_temperature(*scaling.random_qkv(2, 2, 0), 0.0),
    ],
)
def test_bad_temperature_inputs_raise(call):
    with pytest.raises(ValueError):
        call()


# ---------------------------------------------------------------- re-projection


def test_without_scaling_entropy_collapses_as_d_k_grows():
    proj = scaling.random_projection(8, 0)
    sweep = scaling.reprojection_sweep(proj, 2 ** np.arange(10))
    assert sweep.entropy_scaled[0] == pytest.approx(sweep.entropy_unscaled[0])  # √1 = 1
    assert sweep.entropy_unscaled[-3:].max() < 0.5
    assert sweep.entropy_scaled.min() > 0.7 * sweep.max_entropy
    assert np.all(sweep.entropy_unscaled[-3:] < sweep.entropy_scaled[-3:])


def test_compare_scaling_uses_the_first_d_k_columns():
    proj = scaling.random_projection(5, 3)
    c = scaling.compare_scaling(proj, 64)
    np.testing.assert_allclose(c.scaled.scores, (proj.X @ proj.W_Q[:, :64]) @ (proj.X @ proj.W_K[:, :64]).T)
    np.testing.assert_allclose(c.scaled.scaled, c.unscaled.scaled / 8)
    assert c.heads == 8
    assert c.entropy_unscaled < c.entropy_scaled


@pytest.mark.parametrize("d_k, match", [(0, "at least 1"), (3, "divide"), (1.5, "whole")])
def test_bad_head_width_raises(d_k, match):
    with pytest.raises(ValueError, match=match):
        scaling.compare_scaling(scaling.random_projection(4, 0), d_k)
