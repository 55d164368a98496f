import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from core.maths.attention import attend
from core.maths.hopfield import (
    BETA_RANGE,
    ClassicalHopfield,
    ModernHopfield,
    Outcome,
    article_experiment,
    beta_for_temperature,
    capacity_sweep,
    corrupt_and_compare,
    default_loads,
    digit_glyphs,
    flip_bits,
    glyph_patterns,
    hebbian_weights,
    judge,
    random_bipolar,
    temperature_for_beta,
    weights_over_beta,
)


def patterns(m, n=64, seed=1):
    return random_bipolar(m, n, np.random.default_rng(seed))


# ----------------------------------------------------------------------------- the article


def test_article_experiment_redraws_the_articles_random_numbers_in_order():
    e = article_experiment(seed=0)
    rng = np.random.default_rng(0)
    bipolar = rng.choice([-1.0, 1.0], size=(200, 64))
    continuous = rng.standard_normal((200, 64))
    flipped = rng.choice(64, 6, replace=False)
    noise = rng.standard_normal(64)
    np.testing.assert_array_equal(e.classical_patterns, bipolar[:9])
    np.testing.assert_array_equal(e.modern_patterns, continuous)
    expected_query = bipolar[0].copy()
    expected_query[flipped] *= -1
    np.testing.assert_array_equal(e.classical_query, expected_query)
    np.testing.assert_allclose(e.modern_query, continuous[0] + 0.3 * noise)
    assert e.target == 0


def test_article_experiment_recovers_both_targets():
    e = article_experiment(seed=0)
    assert e.classical_verdict.outcome is Outcome.RECOVERED
    assert e.modern_verdict.outcome is Outcome.RECOVERED
    # the classical net fixes all 6 flips in one update and then stays put
    assert e.classical.steps == 1 and e.classical.converged[0]
    np.testing.assert_array_equal(e.classical.final[0], e.classical_patterns[0])
    # the modern net puts all but ~1e-14 of its weight on pattern 0 out of 200
    assert e.modern.weights.shape == (1, 200)
    assert np.argmax(e.modern.weights[0]) == 0 and e.modern.weights[0, 0] > 1 - 1e-12
    assert np.max(np.abs(e.modern.output[0] - e.modern_patterns[0])) < 1e-10


def test_other_seeds_of_the_article_experiment_can_fail_classically():
    runs = [article_experiment(seed) for seed in range(10)]
    failed = [s for s, e in enumerate(runs) if e.classical_verdict.outcome is not Outcome.RECOVERED]
    assert failed == [8, 9]
    assert all(e.modern_verdict.outcome is Outcome.RECOVERED for e in runs)


def test_article_query_is_not_recovered_at_attentions_own_scale():
    e = article_experiment(seed=0, beta=1 / 8)  # β = 1/√64: plain attention, temperature 1
    assert e.modern_verdict.outcome is Outcome.BLEND
    assert 0.6 < e.modern.weights[0, 0] < 0.8
    assert np.max(np.abs(e.modern.output[0] - e.modern_patterns[0])) > 0.3


# ----------------------------------------------------------------------------- classical


def test_hebbian_weights_are_the_sum_of_outer_products_without_diagonal():
    x = patterns(5, 16)
    expected = sum(np.outer(p, p) for p in x) / 16
    np.fill_diagonal(expected, 0)
    w = hebbian_weights(x)
    np.testing.assert_allclose(w, expected)
    np.testing.assert_array_equal(w, w.T)


def test_stored_patterns_and_their_mirrors_are_fixed_points_at_low_load():
    x = patterns(3)
    net = ClassicalHopfield(x)
    for states in (x, -x):
        r = net.retrieve(states)
        assert r.steps == 0 and r.converged.all()
        np.testing.assert_array_equal(r.final, states)


def test_classical_repairs_flipped_bits_at_low_load_and_fails_at_high_load():
    rng = np.random.default_rng(2)
    low = patterns(3)
    r = ClassicalHopfield(low).retrieve(flip_bits(low, 8, rng))
    np.testing.assert_array_equal(r.final, low)
    high = patterns(40)
    r = ClassicalHopfield(high).retrieve(high)  # even clean queries drift at 40 ≫ 0.14·64
    assert np.mean(np.all(r.final == high, axis=1)) < 0.1


def test_classical_outcomes_are_judged():
    x = patterns(3)
    net = ClassicalHopfield(x)
    assert judge(net.retrieve(x[1]).final[0], x, target=1).outcome is Outcome.RECOVERED
    assert judge(net.retrieve(x[1]).final[0], x, target=0).outcome is Outcome.OTHER
    mirror = judge(net.retrieve(-x[2]).final[0], x, target=2)
    assert mirror.outcome is Outcome.MIRROR and mirror.nearest == 2
    np.testing.assert_allclose(mirror.similarity[2], -1.0)
    blend = np.sign(x[0] + x[1] + x[2])  # the classic three-pattern mixture state
    assert judge(blend, x, target=0).outcome is Outcome.BLEND


def test_classical_rejects_bad_input():
    with pytest.raises(ValueError, match="at least one pattern"):
        ClassicalHopfield(np.zeros((0, 64)))
    with pytest.raises(ValueError, match="bipolar"):
        ClassicalHopfield(np.full((2, 4), 0.5))
    with pytest.raises(ValueError, match="64 entries"):
        ClassicalHopfield(patterns(2)).retrieve(np.ones(10))


# ----------------------------------------------------------------------------- modern


@settings(max_examples=25, deadline=None)
@given(
    st.integers(1, 12),
    st.integers(1, 10),
    st.floats(BETA_RANGE[0], 50.0),
    st.integers(0, 2**32 - 1),
)
def test_modern_update_is_attention_with_keys_and_values_the_stored_patterns(m, d, beta, seed):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((m, d))
    q = rng.standard_normal((3, d))
    r = ModernHopfield(x, beta).retrieve(q)
    logits = beta * q @ x.T
    w = np.exp(logits - logits.max(axis=1, keepdims=True))
    w /= w.sum(axis=1, keepdims=True)
    np.testing.assert_allclose(r.weights, w, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(r.output, w @ x, rtol=1e-9, atol=1e-9)
    same = attend(q, x, x, temperature=1 / (beta * np.sqrt(d)))
    np.testing.assert_array_equal(r.output, same.output)


def test_beta_one_over_root_d_is_plain_scaled_dot_product_attention():
    rng = np.random.default_rng(3)
    x, q = rng.standard_normal((7, 16)), rng.standard_normal((2, 16))
    net = ModernHopfield(x, beta=1 / 4)
    assert net.temperature == pytest.approx(1.0)
    np.testing.assert_allclose(net.retrieve(q).output, attend(q, x, x).output, rtol=1e-12)
    assert beta_for_temperature(temperature_for_beta(0.3, 16), 16) == pytest.approx(0.3)


def test_beta_moves_from_the_mean_of_all_patterns_to_the_nearest_one():
    x = patterns(10, seed=4)
    q = flip_bits(x[6], 10, np.random.default_rng(5))
    soft = ModernHopfield(x, beta=BETA_RANGE[0]).retrieve(q)
    np.testing.assert_allclose(soft.weights[0], 0.1, atol=1e-3)
    np.testing.assert_allclose(soft.output[0], x.mean(axis=0), atol=1e-3)
    hard = ModernHopfield(x, beta=BETA_RANGE[1]).retrieve(q)  # huge β: no overflow, one-hot
    assert np.all(np.isfinite(hard.output))
    np.testing.assert_array_equal(hard.weights[0], np.eye(10)[6])
    assert judge(hard.output[0], x, target=6).outcome is Outcome.RECOVERED
    assert judge(soft.output[0], x, target=6).outcome is Outcome.BLEND


@pytest.mark.parametrize("beta", [0.0, -1.0, np.inf, np.nan, 10 * BETA_RANGE[1]])
def test_modern_rejects_bad_beta(beta):
    with pytest.raises(ValueError, match="β must be"):
        ModernHopfield(patterns(2), beta)


def test_modern_rejects_no_patterns():
    with pytest.raises(ValueError, match="at least one pattern"):
        ModernHopfield(np.zeros((0, 8)))


def test_weights_over_beta_sharpen_from_uniform_to_one_hot():
    x = patterns(5, seed=9)
    w = weights_over_beta(x, x[3], [1e-6, 0.125, 1.0])
    np.testing.assert_allclose(w.sum(axis=1), 1.0)
    np.testing.assert_allclose(w[0], 0.2, atol=1e-4)
    assert w[1, 3] < w[2, 3] and w[2, 3] > 0.999
    single = ModernHopfield(x, 0.125).retrieve(x[3]).weights[0]
    np.testing.assert_allclose(w[1], single, rtol=1e-12)


def test_side_by_side_comparison_uses_one_query_for_both_networks():
    x = patterns(4, seed=10)
    c = corrupt_and_compare(x, 2, flips=5, noise=0.0, beta=1.0, rng=np.random.default_rng(0))
    np.testing.assert_array_equal(c.classical_query, c.modern_query)
    assert (c.classical_query != x[2]).sum() == 5
    assert c.classical_verdict.outcome is Outcome.RECOVERED
    assert c.modern_verdict.outcome is Outcome.RECOVERED
    with pytest.raises(ValueError, match="between 0 and 3"):
        corrupt_and_compare(x, 4, flips=5, noise=0.0, beta=1.0, rng=np.random.default_rng(0))


def test_the_ten_digits_are_bipolar_8_by_8_pictures():
    digits = digit_glyphs()
    assert digits.shape == (10, 64) and set(np.unique(digits)) == {-1.0, 1.0}
    assert len({row.tobytes() for row in digits}) == 10  # ten different pictures


def test_glyphs_become_bipolar_rows():
    np.testing.assert_array_equal(
        glyph_patterns([["#.", ".#"], ["..", "##"]]), [[1, -1, -1, 1], [-1, -1, 1, 1]]
    )
    with pytest.raises(ValueError, match="same number"):
        glyph_patterns([["#.", ".#"], ["#"]])


# ----------------------------------------------------------------------------- corruption


def test_flip_bits_negates_exactly_k_distinct_entries_per_row():
    x = patterns(30, 16)
    y = flip_bits(x, 5, np.random.default_rng(6))
    np.testing.assert_array_equal((x != y).sum(axis=1), 5)
    np.testing.assert_array_equal(np.abs(y), 1.0)
    np.testing.assert_array_equal(flip_bits(x, 16, np.random.default_rng(6)), -x)


@pytest.mark.parametrize("k", [-1, 17, 2.5])
def test_flip_bits_rejects_impossible_counts(k):
    with pytest.raises(ValueError, match="between 0 and 16"):
        flip_bits(patterns(2, 16), k, np.random.default_rng(0))


# ----------------------------------------------------------------------------- capacity


def test_default_loads_are_twenty_distinct_counts_from_1_to_400():
    loads = default_loads()
    assert loads.size == 20 and loads[0] == 1 and loads[-1] == 400
    assert np.all(np.diff(loads) > 0)


def test_capacity_sweep_separates_the_networks_and_is_reproducible():
    calls = []
    kwargs = dict(loads=[2, 40], trials=4, progress=lambda d, t: calls.append((d, t)))
    a = capacity_sweep(np.random.default_rng(7), **kwargs)
    b = capacity_sweep(np.random.default_rng(7), loads=[2, 40], trials=4)
    np.testing.assert_array_equal(a.classical, b.classical)
    np.testing.assert_array_equal(a.modern, b.modern)
    assert a.classical[0] > 0.9 and a.classical[1] < 0.1
    np.testing.assert_array_equal(a.modern, [1.0, 1.0])
    assert calls == [(i, 8) for i in range(1, 9)]
    assert a.classical_limit == pytest.approx(8.96)
    assert a.reliable_load(a.modern) == 40 and a.reliable_load(a.classical) == 2
    assert a.reliable_load(np.array([0.5, 1.0])) == 0


def test_capacity_sweep_at_attention_scale_beta_fails_at_high_load():
    s = capacity_sweep(np.random.default_rng(8), loads=[400], trials=1, beta=1 / 8)
    assert s.modern[0] < 0.1


def test_capacity_sweep_stops_when_progress_raises():
    class Cancelled(Exception):
        pass

    def cancel(done, total):
        if done == 2:
            raise Cancelled

    with pytest.raises(Cancelled):
        capacity_sweep(np.random.default_rng(0), loads=[5, 6, 7], trials=1, progress=cancel)


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        (dict(flips=65), "between 0 and 64"),
        (dict(loads=[0, 3]), "at least one pattern"),
        (dict(trials=0), "at least one trial"),
        (dict(beta=0.0), "β must be"),
    ],
)
def test_capacity_sweep_rejects_bad_settings(kwargs, message):
    with pytest.raises(ValueError, match=message):
        capacity_sweep(np.random.default_rng(0), **kwargs)


def test_pick_patterns_checks_the_count_and_the_source():
    from core.maths.hopfield import pick_patterns

    glyphs = np.ones((10, 64))
    rng = np.random.default_rng(0)
    assert pick_patterns("digits", 3, glyphs, 64, rng).shape == (3, 64)
    assert set(np.unique(pick_patterns("random", 5, glyphs, 64, rng))) <= {-1.0, 1.0}
    for source, stored, message in (
        ("digits", 0, "at least one"),
        ("digits", 11, "There are 10 digit"),
        ("words", 2, "Unknown pattern source"),
    ):
        with pytest.raises(ValueError, match=message):
            pick_patterns(source, stored, glyphs, 64, rng)
