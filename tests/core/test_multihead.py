import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from core.maths.attention import attend
from core.maths.masks import causal, padding
from core.maths.multihead import (
    attend_heads,
    head_table,
    head_width,
    multi_head,
    project_heads,
    random_weights,
    split_cost,
    uniform_weights,
)


def setup(seed, n, d_model, heads, scale=0.1):
    """X, W_Q, W_K, W_V, W_O for n distinct tokens."""
    model = random_weights(np.random.default_rng(seed), [f"t{i}" for i in range(n)], d_model)
    return (model.X, *model.split(heads, scale))


def article_preset():
    """The soft-retrieval article's multi-head example: seed 42, 8 tokens, d_model 32, 4 heads."""
    return setup(42, 8, 32, 4)


def test_random_weights_draw_in_the_article_order():
    rng = np.random.default_rng(42)
    X = rng.standard_normal((8, 32))
    W_Q = rng.standard_normal((4, 32, 8)) * 0.1
    W_K = rng.standard_normal((4, 32, 8)) * 0.1
    W_V = rng.standard_normal((4, 32, 8)) * 0.1
    W_O = rng.standard_normal((32, 32)) * 0.1
    for got, expected in zip(article_preset(), (X, W_Q, W_K, W_V, W_O), strict=True):
        np.testing.assert_array_equal(got, expected)


def test_article_table_reproduces():
    table = head_table(multi_head(*article_preset()))
    # The article prints these to 2 and 4 decimals.
    np.testing.assert_array_equal(table.mean_peak, [5.25, 2.375, 2.75, 4.125])
    np.testing.assert_allclose(table.mean_entropy, [2.0457, 2.0454, 2.0490, 2.0378], atol=5e-5)
    np.testing.assert_allclose(table.agreement_head0, [0.1331, 0.1265, 0.1264, 0.1254], atol=5e-5)
    np.testing.assert_allclose(table.agreement_uniform, 1 / 8)


def test_join_lays_heads_side_by_side_then_projects():
    X, W_Q, W_K, W_V, W_O = article_preset()
    trace = multi_head(X, W_Q, W_K, W_V, W_O, mask=causal(8), temperature=0.7)
    for i, head in enumerate(trace.heads):
        expected = attend(X @ W_Q[i], X @ W_K[i], X @ W_V[i], mask=causal(8), temperature=0.7)
        np.testing.assert_allclose(head.weights, expected.weights, atol=1e-15)
        np.testing.assert_allclose(trace.concat[:, 8 * i : 8 * (i + 1)], expected.output)
        np.testing.assert_allclose(trace.queries[i], X @ W_Q[i])
        np.testing.assert_allclose(trace.keys[i], X @ W_K[i])
    np.testing.assert_allclose(trace.output, trace.concat @ W_O)
    assert trace.weights.shape == (4, 8, 8)
    assert trace.output.shape == X.shape


def test_a_new_temperature_needs_only_the_attention_step():
    X, W_Q, W_K, W_V, W_O = article_preset()
    projections = project_heads(X, W_Q, W_K, W_V)
    for temperature in (0.3, 2.0):
        again = attend_heads(*projections, W_O, mask=causal(8), temperature=temperature)
        direct = multi_head(X, W_Q, W_K, W_V, W_O, mask=causal(8), temperature=temperature)
        np.testing.assert_array_equal(again.output, direct.output)
        np.testing.assert_array_equal(again.weights, direct.weights)


def test_changing_the_head_count_regroups_the_same_weights():
    model = random_weights(np.random.default_rng(5), ["a", "b"], 8)
    one, four = model.split(1, 0.5), model.split(4, 0.5)
    for w1, w4 in zip(one[:3], four[:3], strict=True):
        np.testing.assert_array_equal(w1.ravel(), w4.ravel())
    np.testing.assert_array_equal(one[3], four[3])


def test_a_repeated_token_repeats_its_embedding():
    X = random_weights(np.random.default_rng(0), ["the", "cat", "the"], 4).X
    np.testing.assert_array_equal(X[0], X[2])
    assert not np.array_equal(X[0], X[1])


def test_one_head_is_plain_attention_then_w_o():
    X, W_Q, W_K, W_V, W_O = setup(1, 5, 6, 1)
    trace = multi_head(X, W_Q, W_K, W_V, W_O)
    single = attend(X @ W_Q[0], X @ W_K[0], X @ W_V[0])
    np.testing.assert_allclose(trace.output, single.output @ W_O)
    table = head_table(trace)
    np.testing.assert_allclose(table.agreement_head0, [(single.weights**2).sum(-1).mean()])


def test_width_one_model():
    trace = multi_head(*setup(3, 4, 1, 1))
    assert trace.output.shape == (4, 1)
    assert np.all(np.isfinite(trace.output))


def test_head_table_with_a_mask_uses_allowed_keys_only():
    X, W_Q, W_K, W_V, W_O = setup(2, 6, 12, 3)
    trace = multi_head(X, W_Q, W_K, W_V, W_O, mask=causal(6))
    table = head_table(trace)
    # Uniform over the allowed keys of row i is 1/(i + 1) on each of them.
    np.testing.assert_allclose(table.agreement_uniform, np.mean(1 / np.arange(1, 7)))
    assert table.mean_peak.max() <= 5
    np.testing.assert_allclose(uniform_weights(causal(3), 3)[1], [0.5, 0.5, 0.0])


def test_rows_with_no_allowed_key_are_left_out_of_the_means():
    X, W_Q, W_K, W_V, W_O = setup(4, 4, 8, 2)
    hide_first_rows = causal(4) & np.array([[False] * 4, [False] * 4, [True] * 4, [True] * 4])
    trace = multi_head(X, W_Q, W_K, W_V, W_O, mask=hide_first_rows)
    np.testing.assert_array_equal(trace.weights[:, :2], 0.0)
    table = head_table(trace)
    np.testing.assert_allclose(table.agreement_uniform, (1 / 3 + 1 / 4) / 2)
    assert np.all(table.mean_peak >= 0)
    with pytest.raises(ValueError, match="hides every key"):
        head_table(multi_head(X, W_Q, W_K, W_V, W_O, mask=padding([False] * 4)))


def test_split_keeps_matrix_work_the_same():
    one = split_cost(128, 512, 1)
    for h in (2, 4, 8, 16, 512):
        cost = split_cost(128, 512, h)
        assert cost.flops == one.flops
        assert cost.exponentials == h * 128 * 128
    n, d = 128, 512
    assert one.flops["total"] == 8 * n * d * d + 4 * n * n * d


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda: head_width(8, 32, 5), "do not divide"),
        (lambda: head_width(8, 0, 1), "at least 1"),
        (lambda: setup(0, 4, 8, 2, scale=0), "weight scale"),
    ],
)
def test_bad_sizes_raise(call, message):
    with pytest.raises(ValueError, match=message):
        call()


def test_bad_weight_shapes_raise():
    X, W_Q, W_K, W_V, W_O = setup(0, 4, 8, 2)
    with pytest.raises(ValueError, match="W_K must have shape"):
        multi_head(X, W_Q, W_K[:, :4], W_V, W_O)
    with pytest.raises(ValueError, match="same head width"):
        multi_head(X, W_Q, W_K[:, :, :2], W_V, W_O)
    with pytest.raises(ValueError, match="W_O needs"):
        multi_head(X, W_Q, W_K, W_V, W_O[:4])
    with pytest.raises(ValueError, match="3-D"):
        multi_head(X, W_Q[0], W_K, W_V, W_O)
    with pytest.raises(ValueError, match="Temperature"):
        multi_head(X, W_Q, W_K, W_V, W_O, temperature=0.0)


@settings(max_examples=15, deadline=None)
@given(
    n=st.integers(1, 6),
    heads=st.integers(1, 4),
    d_k=st.integers(1, 4),
    seed=st.integers(0, 2**32 - 1),
    temperature=st.floats(0.05, 20),
)
def test_every_head_is_a_distribution(n, heads, d_k, seed, temperature):
    X, W_Q, W_K, W_V, W_O = setup(seed, n, heads * d_k, heads, scale=2.0)
    trace = multi_head(X, W_Q, W_K, W_V, W_O, mask=causal(n), temperature=temperature)
    np.testing.assert_allclose(trace.weights.sum(-1), 1.0)
    assert np.all(np.isfinite(trace.output))
    table = head_table(trace)
    assert np.all(table.agreement_head0 <= 1 + 1e-12)
    assert np.all(table.mean_entropy <= np.log(n) + 1e-12)


def torch_or_skip():
    return pytest.importorskip("torch")


def test_equals_torch_multihead_attention():
    torch = torch_or_skip()
    X, W_Q, W_K, W_V, W_O = article_preset()
    h, d_model, d_k = W_Q.shape
    module = torch.nn.MultiheadAttention(d_model, h, bias=False, batch_first=True)
    module = module.double()
    with torch.no_grad():
        # torch computes x·Wᵀ with heads as consecutive blocks of d_k output features.
        stack = [w.transpose(1, 0, 2).reshape(d_model, h * d_k).T for w in (W_Q, W_K, W_V)]
        module.in_proj_weight.copy_(torch.from_numpy(np.concatenate(stack)))
        module.out_proj.weight.copy_(torch.from_numpy(W_O.T))
    x = torch.from_numpy(X)[None]
    for mask in (None, causal(8)):
        # nn.MultiheadAttention's boolean mask marks the cells to hide: the opposite sense.
        hidden = None if mask is None else torch.from_numpy(~mask)
        out, w = module(x, x, x, attn_mask=hidden, average_attn_weights=False)
        trace = multi_head(X, W_Q, W_K, W_V, W_O, mask=mask)
        np.testing.assert_allclose(trace.output, out[0].detach().numpy(), rtol=0, atol=1e-6)
        np.testing.assert_allclose(trace.weights, w[0].detach().numpy(), rtol=0, atol=1e-6)


def test_equals_torch_sdpa_per_head_with_temperature_and_wider_values():
    torch = torch_or_skip()
    rng = np.random.default_rng(7)
    n, d_model, h, d_k, d_v, temperature = 9, 10, 3, 4, 6, 0.6
    X = rng.standard_normal((n, d_model))
    W_Q, W_K = rng.standard_normal((2, h, d_model, d_k))
    W_V = rng.standard_normal((h, d_model, d_v))
    W_O = rng.standard_normal((h * d_v, d_model))
    mask = causal(n)
    trace = multi_head(X, W_Q, W_K, W_V, W_O, mask=mask, temperature=temperature)
    x = torch.from_numpy(X)
    heads = [
        torch.nn.functional.scaled_dot_product_attention(
            x @ torch.from_numpy(W_Q[i]),
            x @ torch.from_numpy(W_K[i]),
            x @ torch.from_numpy(W_V[i]),
            attn_mask=torch.from_numpy(mask),
            scale=1 / (np.sqrt(d_k) * temperature),
        )
        for i in range(h)
    ]
    expected = torch.cat(heads, dim=-1) @ torch.from_numpy(W_O)
    np.testing.assert_allclose(trace.output, expected.numpy(), rtol=0, atol=1e-6)


def test_head_counts_are_checked_against_d_model():
    from core.maths.multihead import check_heads, fitting_heads, head_divisors, parse_heads

    assert head_divisors(32, 16) == [1, 2, 4, 8, 16] and head_divisors(48, 16) == [1, 2, 3, 4, 6, 8, 12, 16]
    assert fitting_heads(30, 4, 16) == 3 and fitting_heads(7, 4, 16) == 1
    assert parse_heads(" 8 ", 32, 16) == 8
    with pytest.raises(ValueError, match="Heads must be a whole number from 1 to 16"):
        parse_heads("many", 32, 16)
    with pytest.raises(ValueError, match="5 heads do not divide d_model = 32; choose one of 1, 2, 4, 8, 16"):
        check_heads(32, 5, 16)
    with pytest.raises(ValueError, match="At most 16 heads"):
        check_heads(64, 32, 16)
