import numpy as np

from app import lesson_files
from app.panels.linear.state import FEATURE_COUNTS
from app.panels.training import phase
from core.maths.attention import attend
from core.maths.qkv import random_example
from core.maths.recall import recall_sweep
from tests.app.conftest import idle, settle
from tests.waits import patience_ms

ARTICLE_WEIGHTS = [
    [0.38, 0.13, 0.46, 0.03],
    [0.01, 0.0, 0.13, 0.86],
    [0.91, 0.0, 0.08, 0.0],
    [0.01, 0.25, 0.08, 0.66],
]


def test_the_first_step_shows_the_articles_weights_and_linear_rows_two_ways(panel):
    page = panel.bracket
    np.testing.assert_allclose(page.softmax_map.values, ARTICLE_WEIGHTS, atol=0.005)
    Q, K, V = random_example(["the", "cat", "sat", "down"], 8, 4, 0).projections()
    rows = page.outputs.values.reshape(4, 3, 4)  # token, form, dimension
    np.testing.assert_allclose(rows[:, 0], attend(Q, K, V).output, atol=1e-12)
    phi = lambda x: np.where(x > 0, x + 1, np.exp(np.minimum(x, 0)))  # noqa: E731
    weights = phi(Q) @ phi(K).T
    np.testing.assert_allclose(rows[:, 1], weights @ V / weights.sum(1, keepdims=True), atol=1e-12)
    np.testing.assert_allclose(rows[:, 2], rows[:, 1], atol=1e-12)
    assert page.state_view.values.shape == (4, 5)  # S and z: d × (d + 1), whatever the length
    page.text_edit.setText("the cat sat down and then it sat up again")
    assert page.state_view.values.shape == (4, 5) and page.softmax_map.values.shape == (10, 10)
    assert "from n = 6 on" in page.count_note.text()


def test_a_bad_text_is_refused_and_the_step_keeps_its_picture(panel):
    page = panel.bracket
    before = page.softmax_map.values.copy()
    messages = []
    page.live.failed.connect(messages.append)
    page.text_edit.setText("x " * 17)
    assert messages and "at most 16 tokens" in messages[-1]
    np.testing.assert_array_equal(page.softmax_map.values, before)


def test_more_features_lower_the_error_curve_and_the_marker_follows_the_slider(panel):
    panel.set_step(1)
    page = panel.features
    curve = page.favor_curve.yData
    assert len(curve) == len(FEATURE_COUNTS) and curve[-1] < curve[0]
    page.features_slider.setValue(1024)
    x, y = page.chosen.getOriginalDataset()
    assert x[0] == 1024 and y[0] == page.result.errors["favor"]
    weights = page.result.weights
    np.testing.assert_allclose([w.sum() for w in weights.values()], 1.0)  # every map's row sums to 1
    page.row_combo.setCurrentIndex(3)
    assert page.result.row == 3
    sharp = page.result.curve
    page.temperature.setValue(4.0)
    assert (page.result.curve < sharp).all()  # flatter rows: every m does better


def test_the_running_state_matches_the_parallel_form_and_the_caches_follow_the_length(panel):
    panel.set_step(2)
    page = panel.running
    rows = page.rows_view.values
    np.testing.assert_allclose(rows[0], rows[1], atol=1e-12)
    assert max(page.result.max_diff.values()) < 1e-12
    page.token_slider.setValue(11)
    assert page.result.token == 11
    page.context_spin.setValue(4_096)
    sizes = {
        page.caches.item(r, 0).text(): page.caches.item(r, 3).text() for r in range(page.caches.rowCount())
    }
    assert sizes["Llama 2 7B"] == "2 GiB" and sizes["Mamba-2 2.7B"] == "80 MiB"


def test_recall_lands_as_measured_and_equals_core(panel):
    panel.set_step(3)
    page = panel.recall
    settle(page.seed_spin.setValue, 2)
    sweep = page.result
    expected = recall_sweep(64, sweep.pairs, 8.0, 0.95, 2)
    assert sweep.rates == expected.rates
    for name, curve in page.curves.items():
        np.testing.assert_array_equal(curve.yData, expected.rates[name])
    assert page.progress.format() == "all %m values of N" and page.progress.maximum() == 7


def test_three_models_train_live_and_each_finished_run_adds_its_final_accuracy(panel, qtbot):
    panel.set_step(4)
    page = panel.trained
    for pairs in (2, 3):
        page.live.apply(pairs=pairs, length=16, vocab=64, batch=16, steps=30, every=15)
        page.start_button.click()
        idle(120)
        assert phase(page.training) == "done"
    t = page.training.result
    steps, accuracy = page.curves["delta"].getData()
    assert list(steps) == [0, 15, 30] and list(accuracy) == [c.accuracy["delta"] for c in t.checkpoints]
    pairs, finals = page.final_plot_data("softmax")
    assert list(pairs) == [2, 3] and finals[-1] == t.checkpoints[-1].accuracy["softmax"]
    assert page.chance.value() == 1 / 3 and "finished: step 30 of 30" in page.status.text()


def test_training_pauses_resumes_resets_and_a_saved_lesson_reopens_the_paused_run(panel, qtbot):
    panel.set_step(4)
    page, live = panel.trained, panel.trained.training
    page.live.apply(pairs=2, length=16, vocab=64, batch=8, steps=5_000, every=5)
    page.start_button.click()
    qtbot.waitUntil(lambda: live.result.step >= 5, timeout=patience_ms(60))
    page.pause_button.click()
    idle(10)
    paused, lesson = live.result, lesson_files.capture(panel)
    assert phase(live) == "paused" and paused.run.step == paused.step == paused.checkpoints[-1].step
    assert page.start_button.text() == "Resume" and page.buttons.until_spin.value() == paused.step
    page.start_button.click()
    qtbot.waitUntil(lambda: live.result.step > paused.step, timeout=patience_ms(60))
    assert live.result.run is paused.run  # the same run went on
    page.reset_button.click()
    idle(10)
    assert phase(live) == "empty" and live.result.run is None and page.status.text() == "Not trained yet."
    assert lesson_files.apply(panel, lesson) == []
    idle(60)
    again = live.result
    assert again.run is not paused.run and again.state == paused.state and phase(live) == "paused"
    assert [(c.step, c.accuracy, c.loss) for c in again.checkpoints] == [
        (c.step, c.accuracy, c.loss) for c in paused.checkpoints
    ]


def test_settings_out_of_range_are_refused_at_start(panel):
    panel.set_step(4)
    page = panel.trained
    messages = []
    page.told.connect(lambda text, level: messages.append(text))
    page.pairs_spin.setValue(40)
    page.start_button.click()
    assert phase(page.training) == "empty"
    assert any("from 1 to 24" in m for m in messages)


def test_a_new_setting_after_a_run_trains_the_run_again_with_it(panel, qtbot):
    panel.set_step(4)
    page = panel.trained
    page.live.apply(pairs=2, length=16, vocab=64, batch=8, steps=10, every=10)
    page.start_button.click()
    idle(60)
    first = page.training.result
    page.pairs_spin.setValue(3)
    idle(60)
    again = page.training.result
    assert again.run is not first.run and again.state.settings.pairs == 3 and phase(page.training) == "done"
    assert sorted(page.finals) == [2, 3] and "3 pairs" in page.status.text()
