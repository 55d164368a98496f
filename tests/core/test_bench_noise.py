"""No slope through noise: a point whose timed calls spread past NOISY_SPREAD around their
median was disturbed while it ran, and a log-log slope through it is withheld, with the reason."""

import pytest

from core.bench import sweep as bench
from core.bench.sweep import (
    NOISY_SPREAD,
    BenchConfig,
    BenchResult,
    fit_slopes,
    run_benchmark,
    withheld_slopes,
)


def point(impl, n, median_s, spread=0.02, peak_bytes=None):
    peak = 4 * n * n if peak_bytes is None else peak_bytes
    return BenchResult(
        impl, "cpu", "fp32", n, 1, 1, 64, False, median_s, 1.0, peak, 0.0, "ok", repeats=10, spread=spread
    )


def test_a_warm_up_outlier_withholds_its_slope():
    """As on a busy computer: numpy-naive 480 ms at n = 128, 43 ms at 256 (the calls at 128
    ranged from tens of milliseconds to a second), which a fit would read as a slope of −0.69."""
    results = [point("numpy-naive", 128, 0.480, spread=3.1), point("numpy-naive", 256, 0.043)]
    results += [point("numpy-naive", 512, 0.17)]
    results += [point("torch-naive", n, 1e-9 * n**2) for n in (128, 256, 512)]
    assert fit_slopes(results, "median_s", 3) == pytest.approx({"torch-naive": 2})
    (reason,) = withheld_slopes(results, "median_s", 3).values()
    assert "n = 128 is noise" in reason and "310%" in reason and "run it again" in reason
    # Memory is not timed: its slope stands.
    assert set(fit_slopes(results, "peak_bytes", 3)) == {"numpy-naive", "torch-naive"}
    assert withheld_slopes(results, "peak_bytes", 3) == {}


def test_a_settled_spread_is_fitted_and_the_limit_is_the_rule():
    calm = [point("numpy-naive", n, 1e-9 * n**2, spread=NOISY_SPREAD) for n in (128, 256, 512)]
    assert fit_slopes(calm, "median_s", 3) == pytest.approx({"numpy-naive": 2})
    assert withheld_slopes(calm, "median_s", 3) == {}
    once = [*calm[:2], point("numpy-naive", 512, 1e-9 * 512**2, spread=None)]  # one call: spread unknown
    assert fit_slopes(once, "median_s", 3) == {}
    (reason,) = withheld_slopes(once, "median_s", 3).values()
    assert "n = 512 was timed in one call" in reason and "at least twice" in reason
    assert set(fit_slopes(once, "peak_bytes", 3)) == {"numpy-naive"}  # memory is not timed
    noisy = [*calm[:2], point("numpy-naive", 512, 1e-9 * 512**2, spread=NOISY_SPREAD + 0.01)]
    assert fit_slopes(noisy, "median_s", 3) == {}
    assert "n = 512" in withheld_slopes(noisy, "median_s", 3)["numpy-naive"]


def test_too_few_lengths_are_not_called_noise():
    """Below the lengths a slope needs, there is no slope to withhold."""
    results = [point("numpy-naive", 128, 0.48, spread=3.0), point("numpy-naive", 256, 0.043)]
    assert fit_slopes(results, "median_s", 3) == {} and withheld_slopes(results, "median_s", 3) == {}


def test_the_spread_is_the_interquartile_range_over_the_median(monkeypatch):
    times = iter([[0.010, 0.011, 0.010, 0.012, 0.010], [0.010, 0.500, 0.010, 0.900, 0.400]])
    monkeypatch.setattr(bench, "_time_calls", lambda call, config, tick: next(times))
    cfg = BenchConfig(lengths=(16, 32), impls=("numpy-naive",), heads=1, head_dim=8, warmup=0, repeats=5)
    settled, disturbed = run_benchmark(cfg).results
    assert settled.spread == pytest.approx((0.011 - 0.010) / 0.010) and not settled.noisy
    assert disturbed.spread == pytest.approx((0.5 - 0.01) / 0.4) and disturbed.noisy
