import numpy as np
import pytest

from app import worker
from app.panels.scale import HEAD_TOKENS, HEAD_WIDTHS, MULTIPLIER_GRID, TEMPERATURE_GRID, ScalePanel
from core import scaling


@pytest.fixture
def panel(qtbot):
    p = ScalePanel()
    qtbot.addWidget(p)
    p.show()
    assert worker.wait_idle()
    return p


def bar_heights(bars) -> np.ndarray:
    return np.asarray(bars.opts["height"])


def column(table, c: int) -> list[str]:
    return [table.item(r, c).text() for r in range(table.rowCount())]


# ---------------------------------------------------------------- step 1


def test_bars_read_the_articles_weights_at_x1_and_x8(panel):
    np.testing.assert_allclose(np.round(bar_heights(panel.weight_bars), 2), [0.09, 0.24, 0.67])
    panel.multiplier_slider.setValue(8)
    sat = scaling.saturate(np.array([1.0, 2, 3]), 8)
    np.testing.assert_allclose(bar_heights(panel.weight_bars), sat.weights)
    np.testing.assert_allclose(np.round(bar_heights(panel.weight_bars), 2), [0.0, 0.0, 1.0])
    np.testing.assert_allclose(bar_heights(panel.slope_bars), sat.weights * (1 - sat.weights))
    x, y = panel.gradient_marker.getData()
    assert x.tolist() == [8.0] and y[0] == pytest.approx(sat.winner_gradient)
    assert "weights 0.00 / 0.00 / 1.00" in panel.saturation_readout.text()


def test_gradient_curve_follows_the_typed_scores(panel):
    panel.scores_edit.setText("0.5, 1, 4, 2")
    x, y = panel.gradient_curve.getData()
    np.testing.assert_allclose(x, MULTIPLIER_GRID)
    np.testing.assert_allclose(y, scaling.saturation_sweep(np.array([0.5, 1, 4, 2]), MULTIPLIER_GRID))
    assert bar_heights(panel.weight_bars).shape == (4,)
    assert [t[1] for t in panel.weights_plot.getAxis("bottom")._tickLevels[0]] == ["0.5", "1", "4", "2"]


def test_bad_saturation_input_keeps_the_previous_bars(panel):
    cases = [
        (lambda: panel.scores_edit.setText("1, two, 3"), "Scores must be a number from -1000 to 1000"),
        (lambda: panel.scores_edit.setText(""), "type at least one number"),
        (lambda: panel.multiplier_slider.setValue(0), "multiplier must be a positive number"),
        (lambda: panel.scores_edit.setText("1e308, 1"), "from -1000 to 1000"),
    ]
    for action, message in cases:
        panel.multiplier_slider.setValue(2)
        before = bar_heights(panel.weight_bars).copy()
        action()
        assert message in panel.message.text() and panel.message.level == "error"
        np.testing.assert_array_equal(bar_heights(panel.weight_bars), before)
        panel.multiplier_slider.setValue(16)
        assert not panel.message.isVisibleTo(panel)
        assert np.all(np.isfinite(bar_heights(panel.slope_bars)))


# ---------------------------------------------------------------- step 2


def test_growth_points_are_the_measured_spread(panel):
    expected = scaling.dot_product_spread(scaling.GROWTH_WIDTHS, 2000, np.random.default_rng(0))
    x, y = panel.measured_points.getData()
    np.testing.assert_allclose(10**x, scaling.GROWTH_WIDTHS)  # the axis is logarithmic
    np.testing.assert_allclose(y, expected.spread)
    for d_k, size in ((4, 2.0), (64, 8.0), (512, 22.6)):
        panel.growth_slider.setValue(d_k)
        _, marker = panel.growth_marker.getData()
        assert marker[0] == pytest.approx(size, rel=0.06)
        assert f"dₖ = {d_k}: measured spread" in panel.growth_readout.text()
    panel.divide_box.setChecked(True)
    _, y = panel.measured_points.getData()
    np.testing.assert_allclose(y, expected.spread_scaled)
    np.testing.assert_allclose(y, 1, rtol=0.08)
    np.testing.assert_allclose(panel.reference_curve.getData()[1], 1)


def test_growth_slider_steps_through_powers_of_two(panel):
    panel.growth_slider.setValue(1000)
    assert panel.settings.growth_d_k == 1024
    panel.growth_slider.slider.setValue(0)
    assert panel.settings.growth_d_k == 1
    _, y = panel.growth_marker.getData()
    assert np.isfinite(y[0])


def test_sample_count_zero_is_refused_and_huge_is_capped(panel):
    panel.samples_spin.setValue(0)
    assert "at least 2 samples" in panel.message.text()
    assert panel.growth.samples == 2000
    panel.samples_spin.setValue(10**8)
    assert panel.samples_spin.value() == scaling.MAX_SAMPLES
    assert panel.message.level == "warning" and "100,000,000" in panel.message.text()
    panel.samples_spin.setValue(300)  # cancels the long measurement
    assert worker.wait_idle()
    assert panel.growth.samples == 300 and "300 samples" in panel.growth_readout.text()


# ---------------------------------------------------------------- step 3


def test_temperature_table_is_the_articles_preset(panel):
    assert column(panel.token_table, 1) == ["3", "4", "3", "0", "5", "5"]
    assert column(panel.token_table, 2) == ["0.352", "0.414", "0.269", "0.461", "0.290", "0.519"]
    assert column(panel.token_table, 3) == ["1.641", "1.612", "1.675", "1.483", "1.697", "1.323"]
    assert column(panel.sweep_table, 1) == ["0.5628", "1.1511", "1.5719", "1.7312", "1.7763"]
    Q, K, V = scaling.random_qkv(6, 8, 0)
    np.testing.assert_allclose(panel.temperature_map.values, scaling.read_temperature(Q, K, V, 1).weights)
    x, y = panel.entropy_curve.getData()
    np.testing.assert_allclose(10**x, TEMPERATURE_GRID)
    np.testing.assert_allclose(y, scaling.temperature_sweep(Q, K, V, TEMPERATURE_GRID).mean_entropy)
    assert panel.uniform_line.value() == pytest.approx(np.log(6))


def test_second_preset_reproduces_the_printed_sweep(panel):
    panel.preset_combo.setCurrentIndex(1)
    assert (panel.tokens_spin.value(), panel.d_k_spin.value(), panel.seed_spin.value()) == (8, 16, 1)
    assert column(panel.sweep_table, 1) == ["0.7926", "1.4007", "1.8555", "2.0147", "2.0613"]
    assert column(panel.sweep_table, 2) == ["0.7024", "0.5019", "0.3072", "0.2066", "0.1629"]
    assert panel.token_table.rowCount() == 8
    panel.seed_spin.setValue(2)
    assert panel.preset_combo.currentText() == "Custom"
    panel.seed_spin.setValue(1)
    assert panel.preset_combo.currentIndex() == 1


def test_temperature_extremes_stay_finite(panel):
    for t in (0.05, 20.0):
        panel.temperature_slider.setValue(t)
        r = scaling.read_temperature(*scaling.random_qkv(6, 8, 0), t)
        np.testing.assert_allclose(panel.temperature_map.values, r.weights)
        x, y = panel.entropy_marker.getData()
        assert 10 ** x[0] == pytest.approx(t) and y[0] == pytest.approx(r.mean_entropy)
        assert np.all(np.isfinite(panel.temperature_map.values))
        assert f"{r.mean_entropy:.4f}" in panel.temperature_summary.text()


def test_d_k_zero_keeps_the_previous_table(panel):
    before = column(panel.token_table, 2)
    panel.d_k_spin.setValue(0)
    assert "d_k must be between 1 and" in panel.message.text()
    assert column(panel.token_table, 2) == before
    panel.d_k_spin.setValue(16)
    assert not panel.message.isVisibleTo(panel)


# ---------------------------------------------------------------- step 4


def test_heads_views_show_both_scalings(panel):
    proj = scaling.random_projection(HEAD_TOKENS, 0)
    for d_k in (1, 64, 512):
        panel.head_slider.setValue(d_k)
        c = scaling.compare_scaling(proj, d_k)
        np.testing.assert_allclose(panel.scaled_map.values, c.scaled.weights)
        np.testing.assert_allclose(panel.unscaled_map.values, c.unscaled.weights)
        _, y = panel.heads_marker.getData()
        np.testing.assert_allclose(y, [c.entropy_scaled, c.entropy_unscaled])
        assert f"{c.heads} head{'s' if c.heads > 1 else ''} of width {d_k}" in panel.heads_readout.text()


def test_heads_curves_show_the_collapse_without_scaling(panel):
    sweep = scaling.reprojection_sweep(scaling.random_projection(HEAD_TOKENS, 0), HEAD_WIDTHS)
    _, scaled = panel.scaled_curve.getData()
    _, unscaled = panel.unscaled_curve.getData()
    np.testing.assert_allclose(scaled, sweep.entropy_scaled)
    np.testing.assert_allclose(unscaled, sweep.entropy_unscaled)
    assert unscaled[-1] < 0.5 < scaled[-1]
    panel.head_seed_spin.setValue(5)
    assert not np.allclose(panel.unscaled_curve.getData()[1], unscaled)


def test_steps_switch_pages_and_exercise_runs_clean(panel):
    for i in range(len(panel.steps)):
        panel.set_step(i)
        assert panel.pages.currentIndex() == i
    panel.exercise()
    assert worker.wait_idle()
    assert set(panel.export()) >= {"saturation", "growth", "temperature weights"}
