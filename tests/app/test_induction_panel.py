"""Panel "Grow an induction head": the task, live training with Pause/Reset, one layer, knock-outs."""

from __future__ import annotations

import math
import sys

import numpy as np
import pytest

from app import lesson_files, worker
from app.panels.induction import EXERCISE
from app.panels.training import phase
from tests.app.conftest import idle
from tests.waits import patience, patience_ms

pytestmark = pytest.mark.models
pytest.importorskip("torch")

# A model that grows its induction head in about 200 steps (2 heads, blocks of 16).
SMALL = {"steps": 300, "heads": 2, "length": 16}


def train(panel, **settings) -> None:
    panel.settings.apply(**(SMALL | settings))
    panel.set_step(1)
    panel.train.start_button.click()
    idle(600)


def test_the_task_shows_a_block_twice_and_refuses_a_bad_length(panel):
    page = panel.task
    page.length_spin.setValue(5)
    idle(60)  # the example is drawn in the worker (it imports torch)
    tokens = page.result.tokens
    assert len(tokens) == 10 and list(tokens[:5]) == list(tokens[5:])
    # targets 1-5 are guesses (the 5th starts the repeat, which nothing announces); 6-9 copy
    assert page.result.best_loss[:5] == pytest.approx([math.log(64)] * 5)
    assert not page.result.best_loss[5:].any()
    page.length_spin.setValue(0)
    idle(60)
    assert panel.message.isVisibleTo(panel) and "block length" in panel.message.text()
    assert len(page.result.tokens) == 10  # the last good example stays


def test_bad_settings_are_refused_at_start_and_nothing_trains(panel):
    panel.set_step(1)
    panel.train.lr_spin.setValue(0.0)
    assert "learning rate" in panel.message.text()
    panel.train.start_button.click()
    assert phase(panel.training) == "empty" and panel.training.result.run is None
    assert "learning rate" in panel.message.text()
    panel.train.lr_spin.setValue(0.001)
    panel.train.heads_spin.setValue(3)
    assert "split evenly" in panel.message.text()


def test_without_torch_start_says_what_to_get_and_nothing_is_starting(panel, monkeypatch):
    monkeypatch.setattr(sys, "frozen", True, raising=False)  # the lite standalone build
    monkeypatch.setitem(sys.modules, "core.lab.training", None)  # its import fails there
    panel.set_step(1)
    panel.train.start_button.click()
    idle(60)
    assert "Training needs torch" in panel.message.text() and "full build" in panel.message.text()
    assert phase(panel.training) == "empty" and panel.train.status.text() == "Not trained yet."
    assert panel.train.start_button.isEnabled()


def test_training_grows_an_induction_head_and_marks_the_step(panel, qtbot):
    """The smoke's exercise (bad values, then both models trained with SMALL's settings) ends
    trained, and every step shows it."""
    assert EXERCISE == SMALL
    panel.exercise()
    panel.set_step(1)
    qtbot.wait(50)  # the plots lay themselves out again on screen
    t, page = panel.training.result, panel.train
    assert phase(panel.training) == "done" and t.checkpoints[-1].step == SMALL["steps"]
    steps, losses = page.repeat_curve.getData()
    assert list(steps) == [c.step for c in t.checkpoints]
    assert losses[0] > 3.0 and losses[-1] < 1.0
    formed = next(c for c in t.checkpoints if c.induction.max() > 0.5)
    assert page.loss_marker.isVisible() and page.loss_marker.value() == formed.step
    for view, line in ((page.loss_plot, page.loss_marker), (page.score_plot, page.score_marker)):
        item = view.getPlotItem()
        data, legend, label = (x.sceneBoundingRect() for x in (item.vb, item.legend, line.label))
        assert legend.top() >= data.bottom()  # the legend sits under the curves
        assert data.contains(label) and not label.intersects(legend)
    layer, head = np.unravel_index(t.checkpoints[-1].induction.argmax(), (2, 2))
    assert layer == 1 and f"layer 2, head {head + 1}" in page.status.text()
    assert page.start_button.isEnabled() and not page.pause_button.isEnabled()

    # Step 3 compares with one layer, which does not learn the repeat.
    panel.set_step(2)
    assert phase(panel.one_layer_training) == "done"
    one = panel.one_layer_training.result.checkpoints[-1]
    assert one.loss_second > 1.5 and one.induction.max() < 0.5
    assert "1 layer, step 300" in panel.one_layer.summary.text()

    # Step 4 knocks heads out of the 2-layer model and reads a typed sequence.
    panel.set_step(3)
    k = panel.knockout
    idle(60)
    assert k.result is not None and k.result.losses.shape == (2, 2)
    assert k.result.losses.max() > k.result.intact + 1.0
    block = "3 9 14 1 7 12 40 22 50 61 5 33 18 27 44 2"
    k.text_edit.setText(f"{block} {block}")
    idle(60)
    predicted = k.result.reading.predicted[16:-1].tolist()
    assert sum(p == int(b) for p, b in zip(predicted, block.split()[1:], strict=True)) >= 12
    before = k.result
    k.text_edit.setText("3 9 64")
    idle(60)
    assert "outside the vocabulary" in panel.message.text()
    assert k.result is before


def running_to(live, step: int, qtbot) -> None:
    """Wait until ``live``'s run has landed a checkpoint at ``step`` or later while it trains on."""
    at = lambda: live.result is not None and bool(live.result.checkpoints) and live.result.step >= step  # noqa: E731
    qtbot.waitUntil(at, timeout=patience_ms(60))


def losses(result) -> list[tuple]:
    return [(c.step, c.loss_first, c.loss_second) for c in result.checkpoints]


def test_pause_keeps_the_run_where_it_stopped_and_resume_goes_on(panel, qtbot):
    panel.settings.apply(steps=5000, **{k: v for k, v in SMALL.items() if k != "steps"})
    panel.set_step(1)
    page, live = panel.train, panel.training
    page.start_button.click()
    running_to(live, 20, qtbot)
    page.pause_button.click()
    idle(10)
    r = live.result
    assert phase(live) == "paused" and not worker.busy()
    assert r.checkpoints[-1].step == r.step == r.run.step == live.state.until  # measured where it stopped
    assert page.buttons.until_spin.value() == r.step and page.start_button.text() == "Resume"
    assert f"paused: step {r.step:,} of 5,000" in page.status.text()
    qtbot.wait(200)
    assert r.run.step == r.step  # no thread trains it meanwhile
    page.start_button.click()
    running_to(live, r.step + 10, qtbot)
    assert live.result.run is r.run and losses(live.result)[: len(r.checkpoints)] == losses(r)
    page.reset_button.click()
    idle(10)
    assert phase(live) == "empty" and live.result.checkpoints == () and live.state.until == 0
    assert page.status.text() == "Not trained yet." and page.buttons.until_spin.value() == 0
    panel.set_step(3)
    assert panel.knockout.untrained.isVisibleTo(panel)  # the paused model it measured is gone
    assert page.repeat_curve.getData()[0] is None or len(page.repeat_curve.getData()[0]) == 0


def test_a_lesson_saved_while_paused_reopens_the_same_run(panel, qtbot):
    """The step trained to is a control, so the lesson trains the same run to the same step again."""
    panel.settings.apply(**(SMALL | {"steps": 5000, "seed": 4}))
    panel.set_step(1)
    panel.train.start_button.click()
    running_to(panel.training, 15, qtbot)
    panel.train.pause_button.click()
    idle(10)
    before, lesson = panel.training.result, lesson_files.capture(panel)
    panel.train.reset_button.click()
    panel.settings.apply(seed=0)
    idle(10)
    assert lesson_files.apply(panel, lesson) == []
    idle(60)
    after = panel.training.result
    assert after.run is not before.run and phase(panel.training) == "paused"
    assert after.state == before.state and losses(after) == losses(before)
    for a, b in zip(after.checkpoints, before.checkpoints, strict=True):
        np.testing.assert_array_equal(a.induction, b.induction)


def test_training_to_a_typed_step_stops_there_and_a_smaller_one_trains_again(panel, qtbot):
    panel.settings.apply(**SMALL)
    panel.set_step(1)
    page, live = panel.train, panel.training
    page.buttons.until_spin.setValue(30)
    idle(60)
    first = live.result
    assert phase(live) == "paused" and first.step == 30
    assert [c.step for c in first.checkpoints] == [0, 10, 20, 30]
    page.buttons.until_spin.setValue(20)  # a run cannot go back: a new one trains to step 20
    idle(60)
    assert live.result.run is not first.run and losses(live.result) == losses(first)[:3]
    page.buttons.until_spin.setValue(400)
    idle(10)
    assert "from 0 to 300" in panel.message.text() and live.state.until == 20


def test_a_new_setting_mid_run_trains_a_new_run_and_the_old_one_lands_nothing(panel, qtbot):
    panel.settings.apply(**(SMALL | {"steps": 5000}))
    panel.set_step(1)
    live = panel.training
    panel.train.start_button.click()
    running_to(live, 10, qtbot)
    old = live.result.run
    panel.train.seed_spin.setValue(9)
    qtbot.waitUntil(lambda: live.result.run not in (None, old), timeout=patience_ms(60))
    qtbot.wait(300)
    assert live.result.state.settings.seed == 9 and live.state.until == 5000
    assert all(r.state.settings.seed == 9 for r in [live.result])
    panel.train.pause_button.click()
    idle(10)
    assert live.result.run is not old and live.result.state.settings.seed == 9


def test_cancelling_the_worker_stops_training_and_keeps_what_was_measured(panel, qtbot):
    """What closing the window does (worker.cancel_all)."""
    panel.settings.apply(steps=5000)
    panel.set_step(1)
    live = panel.training
    panel.train.start_button.click()
    running_to(live, 10, qtbot)
    assert worker.cancel_all(patience(10))
    assert not worker.busy() and phase(live) == "paused" and 10 <= live.result.step < 5000
    assert panel.train.start_button.text() == "Resume"


def test_before_training_the_loss_axis_runs_from_0_to_above_ln_v(panel):
    panel.set_step(1)
    page = panel.train
    low, high = page.loss_plot.viewRange()[1]
    assert low == pytest.approx(0) and high > math.log(64) * 1.1
    assert page.guess_line.value() == pytest.approx(math.log(64))
    assert page.loss_plot.viewRange()[0][1] >= page.state.steps
    panel.settings.apply(vocab=512, steps=800)
    assert page.guess_line.value() == pytest.approx(math.log(512))
    assert page.loss_plot.viewRange()[1][1] > math.log(512) and page.loss_plot.viewRange()[0][1] >= 800


def test_knock_a_head_out_says_training_comes_first(panel):
    panel.set_step(3)
    k = panel.knockout
    assert k.untrained.isVisibleTo(panel) and "train the model in step 2 first" in k.untrained.text()
    assert not k.losses.isVisibleTo(panel) and not k.table.isVisibleTo(panel)
