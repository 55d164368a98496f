import numpy as np
import pytest

from core.maths.attention import attend
from core.maths.recall import (
    MAX_BYTES,
    default_pairs,
    delta_state,
    draw,
    gated_state,
    recall_outputs,
    recall_sweep,
    sweep_bytes,
)


def test_the_delta_rule_stores_one_pair_and_d_orthonormal_keys_exactly():
    keys, values = draw(1, 8, 1, np.random.default_rng(0))
    np.testing.assert_allclose(delta_state(keys, values)[0] @ keys[0, 0], values[0, 0], atol=1e-12)
    rng = np.random.default_rng(1)
    basis = np.linalg.qr(rng.normal(size=(8, 8)))[0].T[None]  # (1, 8, 8) orthonormal rows
    values = rng.normal(size=(1, 8, 8))
    np.testing.assert_allclose(basis[0] @ delta_state(basis, values)[0].T, values[0], atol=1e-12)


def test_the_delta_rule_is_the_loop_it_describes():
    keys, values = draw(5, 4, 2, np.random.default_rng(2))
    for t in range(2):
        S = np.zeros((4, 4))
        for k, v in zip(keys[t], values[t], strict=True):
            S = S + np.outer(v - S @ k, k)
        np.testing.assert_allclose(delta_state(keys, values)[t], S, atol=1e-12)


def test_the_gated_state_fades_each_pair_by_its_age():
    keys, values = draw(3, 4, 1, np.random.default_rng(3))
    S = np.zeros((4, 4))
    for k, v in zip(keys[0], values[0], strict=True):
        S = 0.5 * S + np.outer(v, k)
    np.testing.assert_allclose(gated_state(keys, values, 0.5)[0], S, atol=1e-12)


def test_softmax_memory_is_attention_with_the_keys_as_queries():
    keys, values = draw(6, 5, 1, np.random.default_rng(4))
    beta = 3.0
    expected = attend(keys[0], keys[0], values[0], temperature=1 / beta, scale=False).output
    np.testing.assert_allclose(recall_outputs(keys, values, beta, 0.9)["softmax"][0], expected, atol=1e-12)


def test_linear_recall_falls_as_pairs_pass_the_dimension_while_sharp_softmax_holds():
    sweep = recall_sweep(32, default_pairs(32), beta=16.0, decay=0.95, seed=0)
    assert sweep.pairs == (4, 8, 16, 32, 64, 128, 256)
    linear, softmax, delta = (np.array(sweep.rates[m]) for m in ("linear", "softmax", "delta"))
    assert (softmax == 1.0).all()
    assert linear[-1] < linear[3] < linear[0]  # positive features: every pair of keys overlaps
    assert delta[3] > 5 * linear[3]  # near N = d the delta rule still finds most values
    assert delta[-1] < 0.5  # but d numbers per value cannot hold 8d pairs
    assert sweep.knee("softmax") == 256 and sweep.knee("linear") < sweep.knee("delta")


def test_a_sweep_lands_point_by_point_and_refuses_what_would_not_fit():
    seen = []
    sweep = recall_sweep(16, (2, 4, 8), 8.0, 0.9, 0, partial=seen.append)
    assert [s.measured for s in seen] == [1, 2] and sweep.measured == 3
    assert seen[0].rates["delta"] == sweep.rates["delta"][:1]
    assert sweep_bytes(64, (100_000,)) > MAX_BYTES
    with pytest.raises(ValueError, match="fewer pairs"):
        recall_sweep(64, (100_000,), 8.0, 0.9, 0)
