import numpy as np
import pytest

from app import lesson_files, worker
from app.panels.memory.state import BETAS, CapacityState
from core.maths.attention import attend
from core.maths.hopfield import article_experiment, capacity_sweep, corrupt_and_compare, digit_glyphs
from tests.app.conftest import idle
from tests.app.test_export_scripts import drawn_numbers, printed_numbers, run_scripts, unprinted
from tests.waits import patience_ms


def bar_heights(bars):
    return bars.others.opts["height"]


def test_default_view_shows_what_core_computes(panel):
    s = panel.settings
    digits = digit_glyphs()
    expected = corrupt_and_compare(
        digits[: s.stored], s.target, s.flips, s.noise, s.beta, np.random.default_rng(s.seed)
    )
    np.testing.assert_array_equal(panel.retrieve.view.classical_stored.patterns, digits[: s.stored])
    np.testing.assert_array_equal(panel.retrieve.view.classical_path.patterns[0], expected.classical_query)
    np.testing.assert_array_equal(
        panel.retrieve.view.classical_path.patterns[-2], expected.classical.final[0]
    )
    np.testing.assert_array_equal(panel.retrieve.view.classical_path.patterns[-1], digits[s.target])
    np.testing.assert_allclose(panel.retrieve.view.modern_path.patterns[1], expected.modern.output[0])
    np.testing.assert_allclose(bar_heights(panel.retrieve.view.modern_bars), expected.modern.weights[0])
    assert panel.retrieve.view.classical_stored.outlined == s.target
    assert (
        panel.retrieve.view.classical_path.captions[0] == "query"
        and panel.retrieve.view.classical_path.captions[-1] == "target"
    )
    assert (
        expected.classical_verdict.outcome.value.capitalize() in panel.retrieve.view.classical_verdict.text()
    )
    assert expected.modern_verdict.outcome.value.capitalize() in panel.retrieve.view.modern_verdict.text()


def test_modern_weights_are_attention_with_keys_and_values_the_stored_patterns(panel):
    panel.set_beta(1 / 8)  # β = 1/√64: plain attention at temperature 1
    c = panel.comparison
    plain = attend(c.modern_query[None, :], c.modern_patterns, c.modern_patterns)
    np.testing.assert_allclose(bar_heights(panel.retrieve.view.modern_bars), plain.weights[0], rtol=1e-12)
    np.testing.assert_allclose(panel.retrieve.view.modern_path.patterns[1], plain.output[0], rtol=1e-12)
    panel.set_step(3)
    assert "T = 1/(0.125·8) = 1" in panel.beta.formula_note.text()


def test_article_preset_reproduces_both_recoveries(panel):
    panel.article_button.click()
    e = article_experiment(0)
    assert panel.retrieve.view.classical_stored.patterns.shape == (9, 64)
    np.testing.assert_array_equal(panel.retrieve.view.classical_path.patterns[0], e.classical_query)
    assert panel.retrieve.view.classical_path.captions == ["query", "1", "target"]
    assert "Recovered the target after 1 update." in panel.retrieve.view.classical_verdict.text()
    assert "Recovered the target in one step" in panel.retrieve.view.modern_verdict.text()
    assert bar_heights(panel.retrieve.view.modern_bars).size == 200
    assert panel.retrieve.view.modern_bars.highlighted.opts["height"][0] > 1 - 1e-12
    assert not panel.stored_spin.isEnabled() and panel.beta_edit.isEnabled()


def test_the_articles_step_changes_nothing_until_its_button_is_pressed(panel):
    before = panel.settings
    panel.set_step(len(panel.steps) - 1)
    assert panel.settings == before and panel.pages.currentWidget() is panel.article
    panel.article.load_button.click()
    assert panel.settings.source == "article" and not panel.article.load_button.isEnabled()
    e = article_experiment(0)
    view = panel.article.view
    np.testing.assert_array_equal(view.classical_path.patterns[0], e.classical_query)
    assert "Recovered the target in one step" in view.modern_verdict.text()
    panel.set_step(0)
    panel.set_step(5)
    assert panel.settings.source == "article"


def test_article_preset_at_attention_scale_ends_in_a_blend(panel):
    panel.article_button.click()
    assert panel.settings.source == "article"
    panel.attention_button.click()
    assert panel.settings.beta == pytest.approx(0.125)
    assert "Settled on a spurious blend" in panel.retrieve.view.modern_verdict.text()
    assert "0.692 on #0" in panel.retrieve.view.modern_verdict.text()


def test_beta_curve_and_line_follow_the_slider(panel):
    panel.set_step(3)
    assert panel.pages.currentIndex() == 1
    panel.beta_slider.setValue(0.01)
    beta = panel.settings.beta
    assert beta == pytest.approx(0.01)
    assert panel.beta.beta_line.value() == pytest.approx(np.log10(beta))
    x, y = panel.beta.target_curve.xData, panel.beta.target_curve.yData
    np.testing.assert_allclose(x, BETAS)
    assert np.all(np.diff(y) >= -1e-12)  # the target's weight only grows with β here
    weights = bar_heights(panel.beta.beta_bars)
    np.testing.assert_allclose(weights, 1 / weights.size, atol=0.2)  # small β: nearly uniform
    mean = panel.comparison.modern_patterns.mean(axis=0)
    np.testing.assert_allclose(panel.beta.beta_pictures.patterns[1], mean)


def type_beta(panel, text):
    panel.beta_edit.setText(text)
    panel.beta_edit.returnPressed.emit()


BAD_INPUT = [
    (lambda p: p.stored_spin.setValue(0), "Store at least one pattern"),
    (lambda p: p.stored_spin.setValue(11), "There are 10 digit pictures"),
    (lambda p: p.flips_spin.setValue(65), "Flip between 0 and 64"),
    (lambda p: p.target_spin.setValue(7), "Pick a target between 0 and 3"),
    (lambda p: type_beta(p, "0"), "β must be"),
    (lambda p: type_beta(p, "1e9"), "β must be"),
    (lambda p: type_beta(p, "abc"), "not a number"),
]


def test_bad_input_keeps_the_previous_state(panel):
    good = (panel.stored_spin.value(), panel.flips_spin.value(), panel.target_spin.value())
    for seed, (action, message) in enumerate(BAD_INPUT, 1):
        before = bar_heights(panel.retrieve.view.modern_bars).copy()
        settings = panel.settings
        action(panel)
        assert message in panel.message.text() and panel.message.level == "error"
        assert panel.settings == settings
        np.testing.assert_array_equal(bar_heights(panel.retrieve.view.modern_bars), before)
        for spin, value in zip((panel.stored_spin, panel.flips_spin, panel.target_spin), good, strict=True):
            spin.setValue(value)  # put the refused value right
        panel.set_beta(settings.beta)
        panel.seed_spin.setValue(seed)  # a valid change clears the message
        assert not panel.message.isVisibleTo(panel) and panel.settings.seed == seed
        assert panel.beta_edit.text() == f"{settings.beta:.4g}"


def test_huge_beta_typed_exactly_stays_finite(panel):
    type_beta(panel, "1e6")
    assert panel.settings.beta == 1e6
    heights = bar_heights(panel.retrieve.view.modern_bars)
    assert np.all(np.isfinite(heights)) and heights.max() == pytest.approx(1.0)


def test_capacity_sweep_runs_when_shown_and_each_load_lands_as_it_is_measured(panel, qtbot):
    page = panel.capacity
    page.trials_spin.setValue(2)
    points = []
    page.live.changed.connect(lambda: points.append(len(page.live.result.loads)))
    panel.set_step(4)
    assert page.cancel_button.isEnabled()
    idle(30)
    expected = capacity_sweep(np.random.default_rng(0), n=64, trials=2, flips=8, beta=1.0)
    assert points == list(range(1, len(expected.loads) + 1))  # one load at a time, then the whole sweep
    x, y = page.classical_curve.xData, page.classical_curve.yData
    np.testing.assert_allclose(x, expected.loads)
    np.testing.assert_allclose(y, expected.classical)
    np.testing.assert_allclose(page.modern_curve.yData, expected.modern)
    assert page.progress.value() == page.progress.maximum() == 40 and not page.cancel_button.isEnabled()
    assert f"up to M = {expected.reliable_load(expected.classical)} " in page.capacity_note.text()
    panel.set_step(0)
    panel.set_step(4)
    assert not worker.busy()  # the sweep on the plot is the one asked for: nothing runs again


def test_a_cancelled_sweep_keeps_its_loads_and_runs_on_when_shown_again(panel, qtbot):
    page = panel.capacity
    page.trials_spin.setValue(100)
    panel.set_step(4)
    qtbot.waitUntil(
        lambda: page.live.result is not None and len(page.live.result.loads) >= 3, timeout=patience_ms(30)
    )
    page.cancel_button.click()
    idle(10)
    kept = len(page.live.result.loads)
    assert 3 <= kept < 20 and len(page.classical_curve.xData) == kept
    assert f"So far {kept} of 20 loads" in page.capacity_note.text() and "stopped" in page.progress.format()
    panel.set_step(3)
    panel.set_step(4)  # shown again: the sweep is finished
    idle(60)
    expected = capacity_sweep(np.random.default_rng(0), n=64, trials=100, flips=8, beta=1.0)
    np.testing.assert_allclose(page.modern_curve.yData, expected.modern)


def test_a_new_setting_mid_sweep_starts_its_sweep_and_the_old_one_lands_nothing(panel, qtbot):
    page = panel.capacity
    page.trials_spin.setValue(100)
    panel.set_step(4)
    qtbot.waitUntil(lambda: page.live.result is not None, timeout=patience_ms(30))
    panel.seed_spin.setValue(5)
    page.trials_spin.setValue(3)
    seen = []
    page.live.changed.connect(lambda: seen.append((page.state.seed, page.state.trials)))
    idle(30)
    assert set(seen) == {(5, 3)}
    expected = capacity_sweep(np.random.default_rng(5), n=64, trials=3, flips=8, beta=1.0)
    np.testing.assert_allclose(page.classical_curve.yData, expected.classical)


def test_a_lesson_reopens_the_same_sweep(panel, qtbot):
    panel.seed_spin.setValue(3)
    panel.capacity.trials_spin.setValue(2)
    panel.set_step(4)
    idle(30)
    before, lesson = panel.capacity.live.result, lesson_files.capture(panel)
    panel.seed_spin.setValue(1)
    panel.capacity.trials_spin.setValue(4)
    idle(30)
    assert lesson_files.apply(panel, lesson) == []
    idle(30)
    after = panel.capacity.live.result
    assert after is not before and panel.capacity.state == CapacityState(3, 8, 1.0, 2)
    np.testing.assert_array_equal(after.classical, before.classical)
    np.testing.assert_array_equal(after.modern, before.modern)


def test_the_capacity_script_reruns_the_sweep_on_the_plot(panel, tmp_path):
    panel.seed_spin.setValue(3)
    panel.capacity.trials_spin.setValue(2)
    panel.set_step(4)
    idle(30)
    path = tmp_path / "capacity.py"
    path.write_text(panel.script(4), encoding="utf-8")
    (run,) = run_scripts([path])
    assert run.returncode == 0, run.stderr
    assert "seed, trials, flips, beta = 3, 2, 8, 1.0" in panel.script(4)
    drawn = drawn_numbers(panel)
    assert len(drawn) and not unprinted(drawn, printed_numbers(run.stdout))
