"""Panel "Grow an induction head": the task, live training with Pause/Reset, one layer, knock-outs."""

from __future__ import annotations

import math
import sys

import numpy as np
import pytest

from app import worker
from app.panels.induction import EXERCISE
from app.trainer import Phase
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
    assert panel.trainer.phase == Phase.EMPTY and panel.trainer.run is None
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
    assert panel.trainer.phase == Phase.DONE and panel.train.status.text() == "Not trained."
    assert panel.train.start_button.isEnabled()


def test_training_grows_an_induction_head_and_marks_the_step(panel, qtbot):
    """The smoke's exercise (bad values, then both models trained with SMALL's settings) ends
    trained, and every step shows it."""
    assert EXERCISE == SMALL
    panel.exercise()
    panel.set_step(1)
    qtbot.wait(50)  # the plots lay themselves out again on screen
    t, page = panel.trainer, panel.train
    assert t.phase == Phase.DONE and t.checkpoints[-1].step == SMALL["steps"]
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
    assert panel.one_layer_trainer.phase == Phase.DONE
    one = panel.one_layer_trainer.checkpoints[-1]
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


def test_pause_stops_the_steps_and_resume_and_reset_work(panel, qtbot):
    panel.settings.apply(steps=5000)
    panel.set_step(1)
    page, t = panel.train, panel.trainer
    page.start_button.click()
    qtbot.waitUntil(lambda: t.run is not None and t.run.step >= 3, timeout=patience_ms(60))
    page.pause_button.click()
    qtbot.waitUntil(lambda: t.paused_at is not None, timeout=patience_ms(10))
    stopped = t.run.step
    qtbot.wait(300)
    assert t.run.step == stopped and t.phase == Phase.PAUSED
    assert page.start_button.text() == "Resume"
    page.start_button.click()
    qtbot.waitUntil(lambda: t.run.step > stopped, timeout=patience_ms(60))
    page.reset_button.click()
    idle(10)
    assert t.phase == Phase.EMPTY and t.checkpoints == [] and t.run is None
    panel.set_step(3)
    assert panel.knockout.untrained.isVisibleTo(panel)  # the paused model it measured is gone
    assert page.repeat_curve.getData()[0] is None or len(page.repeat_curve.getData()[0]) == 0


def test_cancelling_the_worker_stops_training(panel, qtbot):
    """What closing the window does (worker.cancel_all), here while training and while paused."""
    panel.settings.apply(steps=5000)
    panel.set_step(1)
    t = panel.trainer
    for pause in (False, True):
        panel.train.start_button.click()
        qtbot.waitUntil(lambda: t.run is not None and t.run.step >= 2, timeout=patience_ms(60))
        if pause:
            panel.train.pause_button.click()
        assert worker.cancel_all(patience(10))
        assert not worker.busy() and t.phase == Phase.DONE and t.run.step < 5000


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
