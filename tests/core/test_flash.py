from itertools import pairwise

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from core.maths.attention import attend
from core.maths.flash import tiled_attention
from core.maths.masks import causal, padding, sliding_window

moderate = st.floats(-5, 5, allow_nan=False, allow_infinity=False)


@st.composite
def problem(draw):
    """Random Q, K, V, block sizes that need not divide n, and an optional mask."""
    n_q, n_k = draw(st.integers(1, 12)), draw(st.integers(1, 12))
    d_k, d_v = draw(st.integers(1, 5)), draw(st.integers(1, 5))
    Q = draw(arrays(np.float64, (n_q, d_k), elements=moderate))
    K = draw(arrays(np.float64, (n_k, d_k), elements=moderate))
    V = draw(arrays(np.float64, (n_k, d_v), elements=moderate))
    block_q, block_k = draw(st.integers(1, n_q)), draw(st.integers(1, n_k))
    kind = draw(st.sampled_from(["none", "causal", "padding", "random"]))
    if kind == "causal" and n_q == n_k:
        mask = causal(n_q)
    elif kind == "padding":
        valid = draw(arrays(bool, n_k))
        mask = np.broadcast_to(valid, (n_q, n_k)).copy()
    elif kind == "random":
        mask = draw(arrays(bool, (n_q, n_k)))
    else:
        mask = None
    return Q, K, V, block_q, block_k, mask


@settings(max_examples=60, deadline=None)
@given(problem())
def test_tiled_equals_naive(p):
    Q, K, V, block_q, block_k, mask = p
    trace = tiled_attention(Q, K, V, block_q, block_k, mask=mask)
    expected = attend(Q, K, V, mask=mask).output
    np.testing.assert_allclose(trace.output, expected, rtol=0, atol=1e-9)
    assert np.all(np.isfinite(trace.output))


@settings(max_examples=30, deadline=None)
@given(problem())
def test_running_statistics_are_consistent(p):
    Q, K, V, block_q, block_k, mask = p
    trace = tiled_attention(Q, K, V, block_q, block_k, mask=mask)
    last_m: dict[int, np.ndarray] = {}
    for step in trace.steps:
        # a row has l > 0 exactly when it has seen an allowed key, and then m is finite
        seen = np.isfinite(step.m)
        assert np.all(step.l[seen] > 0) and np.all(step.l[~seen] == 0)
        assert np.all((step.rescale >= 0) & (step.rescale <= 1))
        before = last_m.get(step.q_block, np.full(step.m.shape, -np.inf))
        assert np.all(step.m >= before)  # the running maximum never goes down
        last_m[step.q_block] = step.m
    for i in range(trace.n_q_blocks):  # the last step of each block holds its final state
        rows = slice(i * block_q, (i + 1) * block_q)
        np.testing.assert_array_equal(trace.m[rows], last_m.get(i, np.full(trace.m[rows].shape, -np.inf)))


def test_final_statistics_are_row_max_and_exp_sum():
    rng = np.random.default_rng(1)
    Q, K, V = rng.normal(size=(16, 8)), rng.normal(size=(16, 8)), rng.normal(size=(16, 4))
    trace = tiled_attention(Q, K, V, 4, 4)
    naive = attend(Q, K, V)
    np.testing.assert_allclose(trace.m, naive.scaled.max(axis=1), atol=1e-12)
    np.testing.assert_allclose(trace.l, np.exp(naive.scaled - trace.m[:, None]).sum(axis=1), rtol=1e-12)
    assert len(trace.steps) == 16 and trace.skipped == ()
    assert max(abs(trace.output - naive.output).ravel()) <= 1e-12


def test_partial_output_after_some_tiles_is_attention_over_those_keys():
    rng = np.random.default_rng(2)
    Q, K, V = rng.normal(size=(8, 4)), rng.normal(size=(10, 4)), rng.normal(size=(10, 3))
    trace = tiled_attention(Q, K, V, 4, 4)
    step = next(s for s in trace.steps if s.q_block == 1 and s.k_block == 1)  # keys 0 … 7 seen
    expected = attend(Q[4:8], K[:8], V[:8]).output
    np.testing.assert_allclose(step.partial_output, expected, atol=1e-12)


def test_rescale_is_exp_of_the_change_in_max():
    rng = np.random.default_rng(3)
    Q, K, V = rng.normal(size=(6, 3)), rng.normal(size=(9, 3)), rng.normal(size=(9, 2))
    steps = tiled_attention(Q, K, V, 6, 3).steps
    for before, after in pairwise(steps):
        np.testing.assert_allclose(after.rescale, np.exp(before.m - after.m))
        np.testing.assert_allclose(after.m, np.maximum(before.m, after.tile_max))


def test_causal_skips_tiles_above_the_diagonal():
    rng = np.random.default_rng(4)
    Q, K, V = rng.normal(size=(16, 4)), rng.normal(size=(16, 4)), rng.normal(size=(16, 4))
    trace = tiled_attention(Q, K, V, 4, 4, mask=causal(16))
    assert trace.skipped == ((0, 1), (0, 2), (0, 3), (1, 2), (1, 3), (2, 3))
    assert len(trace.steps) == 10
    np.testing.assert_allclose(trace.output, attend(Q, K, V, mask=causal(16)).output, atol=1e-12)


def test_sliding_window_and_padding_match_naive():
    rng = np.random.default_rng(5)
    Q, K, V = rng.normal(size=(13, 4)), rng.normal(size=(13, 4)), rng.normal(size=(13, 5))
    for mask in (sliding_window(13, 3), padding([True] * 9 + [False] * 4)):
        trace = tiled_attention(Q, K, V, 5, 3, mask=mask)
        np.testing.assert_allclose(trace.output, attend(Q, K, V, mask=mask).output, atol=1e-12)


def test_row_with_nothing_allowed_is_zero_not_nan():
    rng = np.random.default_rng(6)
    Q, K, V = rng.normal(size=(4, 2)), rng.normal(size=(4, 2)), rng.normal(size=(4, 2))
    mask = np.ones((4, 4), dtype=bool)
    mask[2] = False
    trace = tiled_attention(Q, K, V, 2, 2, mask=mask)
    assert np.all(trace.output[2] == 0) and trace.l[2] == 0 and trace.m[2] == -np.inf
    assert np.all(np.isfinite(trace.output))


def test_large_scores_do_not_overflow():
    Q = np.array([[800.0, 0.0], [0.0, -900.0]])
    K = np.array([[900.0, 0.0], [1.0, 700.0], [-5.0, 3.0]])
    V = np.array([[1.0], [2.0], [3.0]])
    trace = tiled_attention(Q, K, V, 1, 1)
    np.testing.assert_allclose(trace.output, attend(Q, K, V).output, atol=1e-12)


def test_record_false_keeps_no_steps_and_same_output():
    rng = np.random.default_rng(7)
    Q, K, V = rng.normal(size=(20, 4)), rng.normal(size=(20, 4)), rng.normal(size=(20, 4))
    full = tiled_attention(Q, K, V, 8, 6)
    lean = tiled_attention(Q, K, V, 8, 6, record=False)
    assert lean.steps == () and len(full.steps) == 3 * 4
    np.testing.assert_array_equal(lean.output, full.output)


def test_progress_reports_each_query_block():
    rng = np.random.default_rng(8)
    Q = K = V = rng.normal(size=(10, 2))
    calls = []
    tiled_attention(Q, K, V, 3, 5, progress=lambda done, total: calls.append((done, total)))
    assert calls == [(1, 4), (2, 4), (3, 4), (4, 4)]


@pytest.mark.parametrize(
    ("block_q", "block_k", "message"),
    [
        (0, 2, "block_q"),
        (2, 0, "block_k"),
        (5, 2, "larger than the 4 queries"),
        (2, 9, "larger than the 4 keys"),
        (1.5, 2, "whole number"),
    ],
)
def test_bad_block_sizes_raise(block_q, block_k, message):
    Q = K = V = np.ones((4, 2))
    with pytest.raises(ValueError, match=message):
        tiled_attention(Q, K, V, block_q, block_k)


def test_bad_inputs_raise():
    with pytest.raises(ValueError, match="at least one query"):
        tiled_attention(np.ones((0, 2)), np.ones((3, 2)), np.ones((3, 2)), 1, 1)
    with pytest.raises(ValueError, match="same width"):
        tiled_attention(np.ones((3, 2)), np.ones((3, 4)), np.ones((3, 2)), 1, 1)
    with pytest.raises(ValueError, match="Mask shape"):
        tiled_attention(np.ones((3, 2)), np.ones((3, 2)), np.ones((3, 2)), 1, 1, np.ones((2, 2)))
    with pytest.raises(ValueError, match="NaN"):
        tiled_attention(np.full((3, 2), np.nan), np.ones((3, 2)), np.ones((3, 2)), 1, 1)


def test_state_after_each_step_follows_the_trace():
    rng = np.random.default_rng(9)
    Q, K, V = rng.normal(size=(10, 3)), rng.normal(size=(10, 3)), rng.normal(size=(10, 2))
    trace = tiled_attention(Q, K, V, 4, 3, mask=causal(10))
    first = trace.state_after(0)  # block 0 has seen keys 0 … 2; rows 4 … 9 have not started
    np.testing.assert_allclose(first.output[:4], attend(Q[:4], K[:3], V[:3], causal(10)[:4, :3]).output)
    assert np.all(first.m[4:] == -np.inf) and np.all(first.l[4:] == 0) and np.all(first.output[4:] == 0)
    last = trace.state_after(len(trace.steps) - 1)
    np.testing.assert_array_equal(last.output, trace.output)
    np.testing.assert_array_equal(last.m, trace.m)
    cells = trace.computed_cells(len(trace.steps) - 1)
    assert cells.shape == (10, 10) and np.all(cells[causal(10)])  # every allowed cell computed
    assert cells.sum() < 100  # the tiles above the diagonal were skipped
    assert trace.computed_cells(0).sum() == 4 * 3
    with pytest.raises(ValueError, match="Step must be"):
        trace.state_after(len(trace.steps))
    with pytest.raises(ValueError, match="record=True"):
        tiled_attention(Q, K, V, 4, 3, record=False).computed_cells(0)
