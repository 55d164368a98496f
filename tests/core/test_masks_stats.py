import numpy as np
import pytest

from core.maths import masks
from core.maths.stats import agreement, dot_product_growth, entropy, peak


def test_causal_is_lower_triangular():
    m = masks.causal(4)
    assert m.dtype == bool and m.shape == (4, 4)
    assert m.sum() == 10 and np.array_equal(m, m & np.tri(4, dtype=bool))


def test_padding_hides_keys_from_every_query():
    m = masks.padding([True, True, False])
    assert m[:, 2].sum() == 0 and m[:, :2].all()


def test_sliding_window_counts():
    causal = masks.sliding_window(6, 3)
    assert causal.sum(axis=1).tolist() == [1, 2, 3, 3, 3, 3]
    sym = masks.sliding_window(6, 2, causal=False)
    assert np.array_equal(sym, sym.T) and sym.sum(axis=1).tolist() == [2, 3, 3, 3, 3, 2]


def test_global_local_globals_see_and_are_seen():
    m = masks.global_local(8, 2, [0])
    assert m[0].all() and m[:, 0].all() and np.array_equal(m, m.T)
    with pytest.raises(ValueError, match="Global positions"):
        masks.global_local(4, 2, [4])
    with pytest.raises(ValueError, match="Global positions"):  # not OverflowError
        masks.global_local(4, 2, [99999999999999999999])


def test_combine_is_logical_and_and_empty_rows_are_reported():
    m = masks.combine(masks.causal(3), masks.padding([False, True, True]))
    assert m.tolist() == [[False, False, False], [False, True, False], [False, True, True]]
    assert masks.empty_rows(m).tolist() == [0]
    with pytest.raises(ValueError, match="one shape"):
        masks.combine(masks.causal(3), masks.causal(4))


@pytest.mark.parametrize("call", [lambda: masks.causal(0), lambda: masks.sliding_window(4, 0)])
def test_bad_sizes_raise(call):
    with pytest.raises(ValueError):
        call()


def test_stats_basics():
    w = np.array([[1.0, 0, 0], [1 / 3, 1 / 3, 1 / 3]])
    np.testing.assert_allclose(entropy(w), [0.0, np.log(3)])
    idx, val = peak(w)
    assert idx.tolist() == [0, 0] and val.tolist() == [1.0, 1 / 3]
    assert agreement(w, w) == pytest.approx((1 + 1 / 3) / 2)


def test_dot_products_grow_like_sqrt_d():
    std = dot_product_growth([4, 64, 512], 20000, np.random.default_rng(0))
    np.testing.assert_allclose(std, np.sqrt([4, 64, 512]), rtol=0.05)
