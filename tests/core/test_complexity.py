import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from core.maths import masks
from core.maths.complexity import (
    MEMORY_SIZES,
    MIB,
    attention_cost,
    first_length_exceeding,
    handshake_pairs,
    handshakes,
    loglog_slope,
    pattern_cells,
    tiled_memory,
    window_cells,
)

# The second article's table for d_model = 512: (seq_len, FLOPs, score matrix MB printed to 0.1)
ARTICLE_TABLE = [
    (128, 117_440_512, "0.1"),
    (512, 671_088_640, "1.0"),
    (1_024, 1_879_048_192, "4.0"),
    (4_096, 20_401_094_656, "64.0"),
    (16_384, 287_762_808_832, "1024.0"),
    (65_536, 4_449_586_118_656, "16384.0"),
]


@pytest.mark.parametrize(("n", "flops", "mb"), ARTICLE_TABLE)
def test_article_table_reproduces_exactly(n, flops, mb):
    cost = attention_cost(n, 512)
    assert cost.article_flops == flops
    assert f"{cost.score_bytes_per_head / MIB:.1f}" == mb


def test_article_prose_figures():
    # 64 MiB per head at 4,096 tokens; × 32 layers × 32 heads = 65,536 MiB = 64 GiB
    cost = attention_cost(4_096, 4_096, heads=32, layers=32)
    assert cost.score_bytes_per_head == 64 * MIB
    assert cost.score_bytes_model == 65_536 * MIB == 64 * 2**30
    assert attention_cost(65_536, 512).score_bytes_per_head == 16 * 2**30


def test_benchmark_formula_and_its_relation_to_the_article():
    cost = attention_cost(4_096, 512, heads=8)
    assert cost.d_head == 64
    assert cost.benchmark_flops == 4 * 4_096**2 * 64 * 8
    assert cost.benchmark_flops == 2 * cost.quadratic_flops  # a multiply-add is two FLOPs
    causal = attention_cost(4_096, 512, heads=8, causal=True)
    assert causal.benchmark_flops == cost.benchmark_flops // 2
    assert causal.article_flops == cost.article_flops


def test_model_totals_and_dtypes():
    cost = attention_cost(1_000, 256, heads=4, layers=6, batch=3, dtype="bf16")
    assert cost.score_bytes_per_head == 2_000_000
    assert cost.score_bytes_per_layer == 2_000_000 * 4 * 3
    assert cost.score_bytes_model == 2_000_000 * 4 * 3 * 6
    assert cost.article_flops_model == cost.article_flops * 18
    assert attention_cost(1_000, 256, dtype="fp8").score_bytes_per_head == 1_000_000


def test_counts_are_python_ints_without_overflow():
    cost = attention_cost(1_048_576, 8_192, heads=64, layers=80, batch=8)
    assert type(cost.benchmark_flops_model) is int
    assert cost.benchmark_flops_model == 4 * 1_048_576**2 * 8_192 * 80 * 8 > 2**63
    assert attention_cost(np.int64(512), 512).article_flops == 671_088_640


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"n": 0, "d_model": 512}, "sequence length"),
        ({"n": 12.5, "d_model": 512}, "whole number"),
        ({"n": 8, "d_model": 0}, "d_model"),
        ({"n": 8, "d_model": 512, "heads": 3}, "divisible"),
        ({"n": 8, "d_model": 512, "dtype": "fp64"}, "dtype"),
        ({"n": 8, "d_model": 512, "layers": 0}, "layers"),
        ({"n": True, "d_model": 512}, "whole number"),
    ],
)
def test_bad_cost_inputs_raise(kwargs, message):
    with pytest.raises(ValueError, match=message):
        attention_cost(**kwargs)


def test_first_length_exceeding_is_the_exact_threshold():
    for _label, limit in MEMORY_SIZES:
        for per_pair in (1, 4, 4 * 32 * 32):
            n = first_length_exceeding(limit, per_pair)
            assert n * n * per_pair > limit >= (n - 1) ** 2 * per_pair
    assert first_length_exceeding(16 * 2**30, 4) == 65_537  # 65,536² fp32 is exactly 16 GiB


def test_loglog_slope():
    n = np.array([128, 256, 512, 1024])
    np.testing.assert_allclose(loglog_slope(n, 3 * n**2), 2.0)
    np.testing.assert_allclose(loglog_slope(n, 5 * n), 1.0)
    flops = [attention_cost(int(k), 512).article_flops for k in 2 ** np.arange(7, 21)]
    slopes = loglog_slope(2 ** np.arange(7, 21), flops)
    assert slopes[0] < 1.5 and slopes[-1] > 1.99 and np.all(np.diff(slopes) > 0)
    with pytest.raises(ValueError, match="positive"):
        loglog_slope([1, 2], [0, 1])


def test_handshakes():
    assert handshakes(10) == 45 and handshakes(20) == 190  # the first article's room
    assert handshakes(0) == handshakes(1) == 0
    i, j = handshake_pairs(6)
    assert len(i) == handshakes(6) and np.all(i < j)
    assert len(set(zip(i.tolist(), j.tolist(), strict=True))) == 15


@settings(max_examples=40, deadline=None)
@given(st.integers(1, 40), st.integers(1, 45), st.booleans(), st.data())
def test_pattern_counts_match_the_masks(n, window, causal, data):
    n_global = data.draw(st.integers(0, n))
    assert window_cells(n, window, causal) == masks.sliding_window(n, window, causal).sum()
    expected = masks.global_local(n, window, range(n_global), causal=causal).sum()
    assert pattern_cells(n, window, n_global, causal) == expected


def test_window_cost_is_linear():
    assert window_cells(1_048_576, 4_096) == 4_096 * 4_097 // 2 + (1_048_576 - 4_096) * 4_096
    assert window_cells(2_000_000, 100) / window_cells(1_000_000, 100) == pytest.approx(2, 1e-4)
    with pytest.raises(ValueError, match="global tokens"):
        pattern_cells(4, 2, n_global=5)


def test_tiled_memory():
    held = tiled_memory(16, 16, 8, 4, 4)
    assert (held.naive, held.tile, held.running, held.tiled) == (256, 16, 160, 176)
    big = tiled_memory(65_536, 65_536, 64, 128, 128)
    assert big.naive / big.tiled > 900
    with pytest.raises(ValueError, match="do not fit"):
        tiled_memory(4, 4, 2, 8, 2)


def test_bytes_per_token_pair():
    cost = attention_cost(300, 512, heads=8, layers=6, batch=2, dtype="bf16")
    assert cost.score_bytes_per_token_pair == 2 * 8 * 6 * 2
    assert cost.score_bytes_model == 300 * 300 * cost.score_bytes_per_token_pair


def test_model_totals_of_each_term_add_up_to_the_articles_total():
    cost = attention_cost(2_048, 768, 12, layers=6, batch=3)
    assert cost.qkv_flops_model == 3 * 2_048 * 768**2 * 18
    assert cost.quadratic_flops_model == 2 * 2_048**2 * 768 * 18
    assert cost.qkv_flops_model + cost.quadratic_flops_model == cost.article_flops_model
