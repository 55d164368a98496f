import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from core.maths import positional as pos

even_d = st.integers(1, 16).map(lambda h: 2 * h)


def test_sinusoidal_known_values():
    pe = pos.sinusoidal(3, 4)
    # ω = (1, 10000^(−1/2) = 0.01); columns sin(pω0), cos(pω0), sin(pω1), cos(pω1)
    np.testing.assert_allclose(pe[0], [0, 1, 0, 1], atol=1e-15)
    np.testing.assert_allclose(pe[1], [np.sin(1), np.cos(1), np.sin(0.01), np.cos(0.01)])
    np.testing.assert_allclose(pe[2, :2], [0.9092974268256817, -0.4161468365471424])


def test_sinusoidal_any_position_and_offset_dot_independent_of_start():
    far = pos.sinusoidal_at([1_000_000], 64)
    assert far.shape == (1, 64) and np.all(np.isfinite(far))
    np.testing.assert_allclose(far[0, 0], np.sin(1_000_000.0))
    offsets = np.arange(-5, 6)
    for start in (7, 500):
        pe = pos.sinusoidal_at(start + np.concatenate([[0], offsets + 5]), 16)
        direct = pe[1:] @ pe[0]
        np.testing.assert_allclose(direct, pos.sinusoidal_offset_dot(offsets + 5, 16), atol=1e-12)
    assert pos.sinusoidal_offset_dot([0], 16)[0] == pytest.approx(8.0)


def test_sample_positions_caps_rows():
    assert pos.sample_positions(5, 10).tolist() == [0, 1, 2, 3, 4]
    s = pos.sample_positions(1_000_000, 512)
    assert len(s) == 512 and s[0] == 0 and s[-1] == 999_999 and np.all(np.diff(s) > 0)


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda: pos.sinusoidal(0, 8), "at least 1"),
        (lambda: pos.sinusoidal(4, 7), "odd.*pairs"),
        (lambda: pos.frequencies(8, base=0), "greater than 1"),
        (lambda: pos.frequencies(8, base=-3), "greater than 1"),
        (lambda: pos.rope(np.ones(5), 1), "odd.*pairs"),
        (lambda: pos.rope(np.ones(4), -1), "negative"),
        (lambda: pos.interpolate_positions([1], 4096, 2048), "shorter"),
    ],
)
def test_bad_input_raises_clear_value_error(call, message):
    with pytest.raises(ValueError, match=message):
        call()


def test_learned_table_names_first_missing_position():
    table = pos.learned_table(1024, 8, np.random.default_rng(0))
    assert table.embed(1024).shape == (1024, 8)
    with pytest.raises(pos.PositionOutOfRange, match="No vector for position 1,025") as err:
        table.embed(1500)
    assert err.value.position == 1025 and isinstance(err.value, ValueError)
    again = pos.learned_table(1024, 8, np.random.default_rng(0))
    np.testing.assert_array_equal(table.vectors, again.vectors)


def test_rope_rotates_consecutive_pairs():
    x = np.array([1.0, 0.0, 0.0, 2.0])
    out = pos.rope(x, 1.0, base=100.0)  # ω = (1, 0.1)
    np.testing.assert_allclose(out, [np.cos(1), np.sin(1), -2 * np.sin(0.1), 2 * np.cos(0.1)])
    np.testing.assert_allclose(pos.rope_angles([0, 2], 4, base=100.0), [[0, 0], [2, 0.2]])


@settings(max_examples=25, deadline=None)
@given(even_d, st.integers(0, 2**31), st.floats(0, 1e5))
def test_rope_keeps_norms(d, seed, p):
    x = np.random.default_rng(seed).normal(size=(3, d))
    out = pos.rope(x, np.array([0.0, p, 2 * p]))
    np.testing.assert_allclose(np.linalg.norm(out, axis=1), np.linalg.norm(x, axis=1), rtol=1e-12)


@settings(max_examples=25, deadline=None)
@given(even_d, st.integers(0, 2**31), st.integers(0, 500), st.integers(0, 500), st.integers(1, 300))
def test_rope_score_depends_only_on_offset(d, seed, m, n, shift):
    rng = np.random.default_rng(seed)
    q, k = rng.normal(size=d), rng.normal(size=d)
    here = pos.rope_score(q, k, m, n)
    assert abs(here - pos.rope_score(q, k, m + shift, n + shift)) < 1e-9
    assert abs(here - pos.rope_score(q, k, m - n + 600, 600)) < 1e-9


def test_rope_score_broadcasts_over_offsets():
    rng = np.random.default_rng(1)
    q, k = rng.normal(size=8), rng.normal(size=8)
    m = np.arange(10.0)
    scores = pos.rope_score(q, k, m, 3.0)
    assert scores.shape == (10,)
    assert scores[3] == pytest.approx(q @ k)


@settings(max_examples=25, deadline=None)
@given(st.integers(1, 8192), st.integers(1, 16))
def test_interpolation_maps_target_into_trained_range(trained, factor):
    target = trained * factor + factor // 2
    p = pos.interpolate_positions(np.arange(target), trained, target)
    assert p[0] == 0 and p.max() < trained and np.all(np.diff(p) > 0)


def test_interpolation_angles_match_interpolated_frequencies():
    p = np.arange(0, 8192, 97)
    via_positions = pos.rope_angles(pos.interpolate_positions(p, 2048, 8192), 16)
    w = pos.extended_frequencies("interpolation", 16, 1e4, 2048, 8192)
    np.testing.assert_allclose(via_positions, pos.rope_angles(p, 16, freqs=w), rtol=1e-12)


def test_ntk_keeps_fastest_pair_and_slows_slowest_by_s():
    d, s = 64, 4.0
    w, w_ntk = pos.frequencies(d), pos.extended_frequencies("ntk", d, 1e4, 2048, 8192)
    assert w_ntk[0] == w[0]
    assert w_ntk[-1] == pytest.approx(w[-1] / s, rel=1e-12)
    assert pos.ntk_base(1e4, d, 2048, 8192) == pytest.approx(1e4 * s ** (64 / 62))


def test_yarn_keeps_fast_pairs_interpolates_slow_ones():
    d, base, trained, target = 128, 1e4, 4096, 32768
    w = pos.frequencies(d, base)
    w_yarn = pos.extended_frequencies("yarn", d, base, trained, target)
    turns = trained * w / (2 * np.pi)
    fast, slow = turns > pos.YARN_BETA, turns < pos.YARN_ALPHA
    assert fast.any() and slow.any()
    np.testing.assert_array_equal(w_yarn[fast], w[fast])
    np.testing.assert_allclose(w_yarn[slow], w[slow] / 8)
    assert pos.yarn_attention_factor(trained, target) == pytest.approx((0.1 * np.log(8) + 1) ** 2)


def test_unseen_pairs_per_method():
    d, base, trained, target = 64, 1e4, 2048, 16384
    w = pos.frequencies(d, base)
    naive = pos.unseen_pairs(w, w, trained, target)
    assert naive[-11:].all() and not naive[:21].any()  # fast pairs turned fully in training
    np.testing.assert_allclose(pos.overshoot(w, w, trained, target), (target - 1) / trained)
    for method in ("interpolation", "yarn"):
        w_ext = pos.extended_frequencies(method, d, base, trained, target)
        assert not pos.unseen_pairs(w_ext, w, trained, target).any(), method
    w_ntk = pos.extended_frequencies("ntk", d, base, trained, target)
    ntk = pos.unseen_pairs(w_ntk, w, trained, target)
    assert ntk[21:-1].all() and not ntk[-1]  # NTK still overshoots slightly in the middle
    assert pos.overshoot(w_ntk, w, trained, target)[ntk].max() < 2.0


def test_permutation_without_position_only_reorders():
    rng = np.random.default_rng(3)
    t = pos.permutation_attention("dog bites man", "man bites dog", 8, rng)
    assert t.where_in_b.tolist() == [2, 1, 0]
    assert t.difference < 1e-12
    np.testing.assert_allclose(t.b.weights, t.a.weights[::-1, ::-1])


@pytest.mark.parametrize("encoding", ["sinusoidal", "rope"])
def test_permutation_with_position_breaks_symmetry(encoding):
    t = pos.permutation_attention("dog bites man", "man bites dog", 8, np.random.default_rng(3), encoding)
    assert t.difference > 1e-3


def test_permutation_needs_the_same_words():
    with pytest.raises(ValueError, match="same words"):
        pos.permutation_attention("dog bites man", "cat bites man", 8, np.random.default_rng(0))
