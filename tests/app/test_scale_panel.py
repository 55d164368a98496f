import numpy as np
import pytest

from app.panels.scale.state import (
    HEAD_TOKENS,
    HEAD_WIDTHS,
    MULTIPLIER_GRID,
    TEMPERATURE_GRID,
    SaturationState,
)
from core.maths import scaling
from tests.app.conftest import idle


def bar_heights(bars) -> np.ndarray:
    return np.asarray(bars.opts["height"])


def column(table, c: int) -> list[str]:
    return [table.item(r, c).text() for r in range(table.rowCount())]


# ---------------------------------------------------------------- step 1


def test_bars_read_the_articles_weights_at_x1_and_x8(panel):
    np.testing.assert_allclose(np.round(bar_heights(panel.saturation.weight_bars), 2), [0.09, 0.24, 0.67])
    panel.saturation.multiplier_slider.setValue(8)
    sat = scaling.saturate(np.array([1.0, 2, 3]), 8)
    np.testing.assert_allclose(bar_heights(panel.saturation.weight_bars), sat.weights)
    np.testing.assert_allclose(np.round(bar_heights(panel.saturation.weight_bars), 2), [0.0, 0.0, 1.0])
    np.testing.assert_allclose(bar_heights(panel.saturation.slope_bars), sat.weights * (1 - sat.weights))
    x, y = panel.saturation.gradient_marker.getData()
    assert x.tolist() == [8.0] and y[0] == pytest.approx(sat.winner_gradient)
    assert "weights 0.00 / 0.00 / 1.00" in panel.saturation.readout.text()


def test_gradient_curve_follows_the_typed_scores(panel):
    panel.saturation.scores_edit.setText("0.5, 1, 4, 2")
    x, y = panel.saturation.gradient_curve.getData()
    np.testing.assert_allclose(x, MULTIPLIER_GRID)
    np.testing.assert_allclose(y, scaling.saturation_sweep(np.array([0.5, 1, 4, 2]), MULTIPLIER_GRID))
    assert bar_heights(panel.saturation.weight_bars).shape == (4,)
    ticks = panel.saturation.weights_plot.getAxis("bottom")._tickLevels[0]
    assert [t[1] for t in ticks] == ["0.5", "1", "4", "2"]


def test_bad_saturation_input_keeps_the_previous_bars(panel):
    page = panel.saturation
    cases = [
        (lambda: page.scores_edit.setText("1, two, 3"), "Scores must be a number from -1000 to 1000"),
        (lambda: page.scores_edit.setText(""), "type at least one number"),
        (lambda: page.multiplier_slider.setValue(0), "multiplier must be a positive number"),
        (lambda: page.scores_edit.setText("1e308, 1"), "from -1000 to 1000"),
    ]
    for action, message in cases:
        page.multiplier_slider.setValue(2)
        before = bar_heights(page.weight_bars).copy()
        action()
        assert message in panel.message.text() and panel.message.level == "error"
        np.testing.assert_array_equal(bar_heights(page.weight_bars), before)
        page.scores_edit.setText("1, 2, 3")
        page.multiplier_slider.setValue(16)  # fixed: the bars follow again
        assert not panel.message.isVisibleTo(panel)
        assert page.state == SaturationState("1, 2, 3", 16.0)
        assert np.all(np.isfinite(bar_heights(page.slope_bars)))


def test_bad_scores_stay_refused_until_fixed(panel):
    page = panel.saturation
    before = bar_heights(page.weight_bars).copy()
    page.scores_edit.setText("1, two, 3")
    page.multiplier_slider.setValue(5)  # the typed scores are still bad: still refused
    assert "Scores must be a number" in panel.message.text()
    np.testing.assert_array_equal(bar_heights(page.weight_bars), before)
    page.scores_edit.setText("1, 2, 3")
    assert not panel.message.isVisibleTo(panel) and page.state.multiplier == 5


# ---------------------------------------------------------------- step 2


def test_growth_points_are_the_measured_spread(panel):
    panel.set_step(1)
    expected = scaling.dot_product_spread(scaling.GROWTH_WIDTHS, 2000, np.random.default_rng(0))
    x, y = panel.growth.measured_points.getData()
    np.testing.assert_allclose(10**x, scaling.GROWTH_WIDTHS)  # the axis is logarithmic
    np.testing.assert_allclose(y, expected.spread)
    for d_k, size in ((4, 2.0), (64, 8.0), (512, 22.6)):
        panel.growth.growth_slider.setValue(d_k)
        _, marker = panel.growth.growth_marker.getData()
        assert marker[0] == pytest.approx(size, rel=0.06)
        assert f"dₖ = {d_k}: measured spread" in panel.growth.readout.text()
    panel.growth.divide_box.setChecked(True)
    _, y = panel.growth.measured_points.getData()
    np.testing.assert_allclose(y, expected.spread_scaled)
    np.testing.assert_allclose(y, 1, rtol=0.08)
    np.testing.assert_allclose(panel.growth.reference_curve.getData()[1], 1)


def test_growth_slider_steps_through_powers_of_two(panel):
    panel.set_step(1)
    panel.growth.growth_slider.setValue(1000)
    assert panel.growth.state.d_k == 1024
    panel.growth.growth_slider.slider.setValue(0)
    assert panel.growth.state.d_k == 1
    _, y = panel.growth.growth_marker.getData()
    assert np.isfinite(y[0])


def test_sample_count_zero_is_refused_and_huge_is_capped(panel):
    panel.set_step(1)
    panel.growth.samples_spin.setValue(0)
    assert "at least 2 samples" in panel.message.text()
    assert panel.growth.growth.samples == 2000
    panel.growth.samples_spin.setValue(10**8)
    assert panel.growth.samples_spin.value() == scaling.MAX_SAMPLES
    assert panel.message.level == "warning" and "100,000,000" in panel.message.text()
    panel.growth.samples_spin.setValue(300)  # cancels the long measurement
    idle()
    assert panel.growth.growth.samples == 300 and "300 samples" in panel.growth.readout.text()


# ---------------------------------------------------------------- step 3


def test_temperature_table_is_the_articles_preset(panel):
    panel.set_step(2)
    assert column(panel.temperature.token_table, 1) == ["3", "4", "3", "0", "5", "5"]
    assert column(panel.temperature.token_table, 2) == ["0.352", "0.414", "0.269", "0.461", "0.290", "0.519"]
    assert column(panel.temperature.token_table, 3) == ["1.641", "1.612", "1.675", "1.483", "1.697", "1.323"]
    assert column(panel.temperature.sweep_table, 1) == ["0.5628", "1.1511", "1.5719", "1.7312", "1.7763"]
    Q, K, V = scaling.random_qkv(6, 8, 0)
    weights = scaling.read_temperature(Q, K, V, 1).weights
    np.testing.assert_allclose(panel.temperature.temperature_map.values, weights)
    x, y = panel.temperature.entropy_curve.getData()
    np.testing.assert_allclose(10**x, TEMPERATURE_GRID)
    np.testing.assert_allclose(y, scaling.temperature_sweep(Q, K, V, TEMPERATURE_GRID).mean_entropy)
    assert panel.temperature.uniform_line.value() == pytest.approx(np.log(6))


def test_second_preset_reproduces_the_printed_sweep(panel):
    panel.set_step(2)
    panel.temperature.preset_combo.setCurrentIndex(1)
    page = panel.temperature
    assert (page.tokens_spin.value(), page.d_k_spin.value(), page.seed_spin.value()) == (8, 16, 1)
    assert column(panel.temperature.sweep_table, 1) == ["0.7926", "1.4007", "1.8555", "2.0147", "2.0613"]
    assert column(panel.temperature.sweep_table, 2) == ["0.7024", "0.5019", "0.3072", "0.2066", "0.1629"]
    assert panel.temperature.token_table.rowCount() == 8
    panel.temperature.seed_spin.setValue(2)
    assert panel.temperature.preset_combo.currentText() == "Custom"
    panel.temperature.seed_spin.setValue(1)
    assert panel.temperature.preset_combo.currentIndex() == 1


def test_temperature_extremes_stay_finite(panel):
    panel.set_step(2)
    for t in (0.05, 20.0):
        panel.temperature.temperature_slider.setValue(t)
        r = scaling.read_temperature(*scaling.random_qkv(6, 8, 0), t)
        np.testing.assert_allclose(panel.temperature.temperature_map.values, r.weights)
        x, y = panel.temperature.entropy_marker.getData()
        assert 10 ** x[0] == pytest.approx(t) and y[0] == pytest.approx(r.mean_entropy)
        assert np.all(np.isfinite(panel.temperature.temperature_map.values))
        assert f"{r.mean_entropy:.4f}" in panel.temperature.summary.text()


def test_d_k_zero_keeps_the_previous_table(panel):
    panel.set_step(2)
    before = column(panel.temperature.token_table, 2)
    panel.temperature.d_k_spin.setValue(0)
    assert "d_k must be between 1 and" in panel.message.text()
    assert column(panel.temperature.token_table, 2) == before
    panel.temperature.d_k_spin.setValue(16)
    assert not panel.message.isVisibleTo(panel)


# ---------------------------------------------------------------- step 4


def test_heads_views_show_both_scalings(panel):
    panel.set_step(3)
    proj = scaling.random_projection(HEAD_TOKENS, 0)
    for d_k in (1, 64, 512):
        panel.heads.head_slider.setValue(d_k)
        c = scaling.compare_scaling(proj, d_k)
        np.testing.assert_allclose(panel.heads.scaled_map.values, c.scaled.weights)
        np.testing.assert_allclose(panel.heads.unscaled_map.values, c.unscaled.weights)
        _, y = panel.heads.heads_marker.getData()
        np.testing.assert_allclose(y, [c.entropy_scaled, c.entropy_unscaled])
        assert f"{c.heads} head{'s' if c.heads > 1 else ''} of width {d_k}" in panel.heads.readout.text()


def test_heads_curves_show_the_collapse_without_scaling(panel):
    panel.set_step(3)
    sweep = scaling.reprojection_sweep(scaling.random_projection(HEAD_TOKENS, 0), HEAD_WIDTHS)
    _, scaled = panel.heads.scaled_curve.getData()
    _, unscaled = panel.heads.unscaled_curve.getData()
    np.testing.assert_allclose(scaled, sweep.entropy_scaled)
    np.testing.assert_allclose(unscaled, sweep.entropy_unscaled)
    assert unscaled[-1] < 0.5 < scaled[-1]
    panel.heads.head_seed_spin.setValue(5)
    assert not np.allclose(panel.heads.unscaled_curve.getData()[1], unscaled)


def test_steps_switch_pages_and_exercise_runs_clean(panel):
    for i in range(len(panel.steps)):
        panel.set_step(i)
        assert panel.pages.currentIndex() == i
    panel.exercise()
    idle()
    assert set(panel.export()) >= {"saturation", "growth", "temperature_weights"}


def test_exported_scripts_rebuild_the_changed_settings(panel, tmp_path):
    """Step 1 after new scores and multiplier, step 2 divided with 300 samples: each script
    prints the numbers its step now draws."""
    from tests.app.test_export_scripts import drawn_numbers, printed_numbers, run_scripts, unprinted

    panel.saturation.scores_edit.setText("0.5, 1, 4, 2")
    panel.saturation.multiplier_slider.setValue(8)
    panel.growth.divide_box.setChecked(True)
    panel.growth.samples_spin.setValue(300)
    idle()
    paths, drawn = [tmp_path / "saturation.py", tmp_path / "growth.py"], []
    for i, path in enumerate(paths):
        panel.set_step(i)
        drawn.append(drawn_numbers(panel))
        path.write_text(panel.script(i), encoding="utf-8")
    runs = run_scripts(paths)
    for run, numbers in zip(runs, drawn, strict=True):
        assert run.returncode == 0, run.stderr
        assert not unprinted(numbers, printed_numbers(run.stdout))
    slope = scaling.saturate(np.array([0.5, 1, 4, 2]), 8).winner_gradient
    assert f"p(1 − p) = {slope:.6g}" in runs[0].stdout
    spread = scaling.dot_product_spread(scaling.GROWTH_WIDTHS, 300, np.random.default_rng(0))
    assert f"divided by √dₖ it is {spread.at(64)[1]:.6g}" in runs[1].stdout
