"""Panel "Next token" on a tiny random Llama with grouped-query attention: every number drawn is
core's; model runs and decode steps go through the worker; bad input keeps the last result."""

import sys

import numpy as np
import pytest

from app import log_file
from app.panels.next_token import NextTokenPanel
from app.panels.next_token.temperature import DRAW_HINT
from core import models
from core.interp import decode_timing, kv_cache, prediction
from core.maths import sampling
from core.models import smollm2
from core.models.loaded import shared
from tests.app.conftest import idle, settle
from tests.waits import patience_ms

pytestmark = pytest.mark.models
pytest.importorskip("torch")
pytest.importorskip("transformers")

PROMPT = "the cat sat on the mat"


@pytest.fixture
def panel(qtbot, llama_folder):
    p = NextTokenPanel()
    qtbot.addWidget(p)
    p.resize(1300, 800)
    p.show()
    idle()
    settle(p.prompt.setText, PROMPT)
    settle(p.use_model, str(llama_folder))
    assert p.model is not None and p.writing.generation is not None
    return p


def test_without_smollm2_the_panel_offers_to_add_it(qtbot):
    assert smollm2.installed_folder() is None
    p = NextTokenPanel()
    qtbot.addWidget(p)
    p.show()
    idle()
    assert p.row.add_button.isVisibleTo(p) and "93 MB" in p.row.add_button.text()
    assert p.message.level == "info" and "Add" in p.message.text()
    settle(p.row.add_button.click)  # offline in tests: says what to do, offers the button again
    assert "internet connection" in p.message.text() and "full installer" in p.message.text()
    assert p.row.add_button.isVisibleTo(p) and p.model is None
    # nothing half-added is left (windows opened by other tests may have started the app's log)
    left = [f.name for f in smollm2.data_folder().iterdir() if not f.name.startswith(log_file.NAME)]
    assert left == []


def test_the_lite_standalone_build_says_the_full_build_includes_smollm2(qtbot, monkeypatch):
    monkeypatch.setattr(sys, "frozen", True, raising=False)  # a standalone build ...
    monkeypatch.setitem(sys.modules, "torch", None)  # ... without torch: the lite one
    p = NextTokenPanel()
    qtbot.addWidget(p)
    p.show()
    idle()
    said = p.message.text()
    assert "full build" in said and smollm2.NAME in said and "pip" not in said
    assert not p.row.add_button.isVisibleTo(p) and "full build" in p.no_model.text()
    settle(p.use_model, smollm2.KEY)  # choosing SmolLM2 in the list says the same, with no Add button
    assert p.message.text() == said and not p.row.add_button.isVisibleTo(p) and p.model is None


def test_predictions_equal_core(panel):
    model = panel.model
    expected = sampling.reshape(prediction.predict(model, PROMPT).logits)
    choices, rest = sampling.top(expected, panel.predictions.listed_spin.value())
    np.testing.assert_allclose(
        sampling.reshape(panel.writing.generation.logits).probs, expected.probs, atol=1e-6
    )
    widths = panel.predictions.bars.bars.opts["width"]
    np.testing.assert_allclose(widths, [*(c.prob for c in choices), rest], atol=1e-6)
    assert "␣the" in panel.predictions.tokens.text() and "Entropy" in panel.predictions.summary.text()
    assert "2 layers × 4 heads sharing 2 key/value heads" in panel.row.info.text()


def test_settings_reshape_without_running_the_model(panel):
    logits = panel.writing.generation.logits
    generation = panel.writing.generation
    panel.set_step(1)
    t = panel.temperature
    t.temperature.setValue(0.5)
    t.top_k.setValue(3)
    assert not panel.busy and panel.writing.run.task is None  # no model run for a settings change
    assert panel.writing.generation is generation and panel.writing.sampling.state.top_k == 3
    d = panel.writing.snapshot().dist
    np.testing.assert_allclose(d.probs, sampling.tempered(logits, t.temperature.value()))
    assert d.kept.sum() == 3
    brushes = t.bars.bars.opts["brushes"]
    assert brushes[:3] == ["#3d7bd9"] * 3 and brushes[3] == "#b9b9b9"
    t.draw_button.click()
    assert "Drawn (seed 0)" in t.sample_label.text()
    t.temperature.setValue(2.0)  # a new distribution: the draw from the old one is gone
    assert "Drawn" not in t.sample_label.text() and t.sample_label.text() == DRAW_HINT


def test_generate_append_click_undo_and_auto(panel, qtbot):
    """Each step shows a new generation; one shown is never changed afterwards."""
    panel.set_step(2)
    first = panel.writing.generation
    start = first.length
    settle(panel.generate.sample_button.click)
    clicked = panel.writing.snapshot().choices[2]
    settle(panel.generate.candidates.itemClicked.emit, panel.generate.candidates.item(2))
    g = panel.writing.generation
    assert g.length == start + 2 and g.chosen[1].id == clicked.id and g.chosen[1].prob == clicked.prob
    assert first.length == start and not first.chosen  # the prompt alone, as it was shown
    assert panel.generate.history.count() == 2
    np.testing.assert_allclose(g.logits, prediction.prefill(panel.model, g.ids).logits, atol=1e-5)
    settle(panel.generate.undo_button.click)
    assert panel.writing.generation is g.undo() and panel.writing.generation.length == start + 1
    assert panel.generate.history.count() == 1 and g.length == start + 2
    panel.generate.auto_button.setChecked(True)
    qtbot.waitUntil(
        lambda: panel.writing.generation.length >= start + 4 or not panel.generate.auto_button.isChecked(),
        timeout=patience_ms(30),
    )
    panel.generate.auto_button.setChecked(False)
    idle()
    g = panel.writing.generation
    assert g.length >= start + 4 or g.chosen[-1].id == panel.model.tokenizer.eos_token_id
    np.testing.assert_allclose(g.logits, prediction.prefill(panel.model, g.ids).logits, atol=1e-5)


def test_appended_draws_are_the_cli_generation_for_the_same_seed(panel, llama_folder, capsys):
    """One generator per generation: each appended token takes the seed's next number, so the
    panel's tokens are ``predict --generate N --seed S``'s (not all drawn with its first number)."""
    import json

    from app.main import main

    panel.set_step(2)
    panel.temperature.temperature.setValue(3.0)  # flat: another number almost surely gives another token
    panel.temperature.top_p.setValue(0.95)
    panel.temperature.seed.setValue(7)
    panel.temperature.draw_button.click()  # step 2's draws do not use up the generation's numbers
    for _ in range(6):
        settle(panel.writing.append_sample)
    chosen = panel.writing.generation.chosen
    assert main(["predict", "--text", PROMPT, "--model", str(llama_folder), "--generate", "6",
                 "--temperature", "3", "--top-p", "0.95", "--seed", "7", "--json"]) == 0  # fmt: skip
    generated = json.loads(capsys.readouterr().out)["generated"]
    assert [c.id for c in chosen] == [g["id"] for g in generated]
    np.testing.assert_allclose([c.prob for c in chosen], [g["prob"] for g in generated], atol=1e-6)
    # by hand: the k-th token is where the seed's k-th number falls in step k's distribution
    numbers = np.random.default_rng(7).random(len(chosen))
    ids = panel.writing.generation.ids
    start = len(ids) - len(chosen)
    by_number, by_first = [], []
    for k in range(len(chosen)):
        p = sampling.reshape(
            prediction.prefill(panel.model, ids[: start + k]).logits, 3.0, None, 0.95
        ).sampling
        by_number.append(int(np.searchsorted(np.cumsum(p), numbers[k], side="right")))
        by_first.append(int(np.searchsorted(np.cumsum(p), numbers[0], side="right")))
    assert [c.id for c in chosen] == by_number
    assert by_first != by_number  # re-seeding at every token would have been caught
    assert panel.writing.streams.appended.count == len(chosen)
    before = [c.id for c in chosen]
    for _ in range(3):
        settle(panel.writing.undo)
    for _ in range(3):
        settle(panel.writing.append_sample)
    assert [c.id for c in panel.writing.generation.chosen] == before  # undone and drawn again: the same


def test_cache_and_groups_pages(panel):
    settle(panel.generate.sample_button.click)  # at least one decode step in the cache
    g = panel.writing.generation
    panel.set_step(3)
    cache = panel.cache.cache_map
    assert cache.values.shape == (2, g.length)
    assert cache.plot.getAxis("left").labelText == "layer"
    assert cache.plot.getAxis("top").labelText == "cached token"
    assert [label for _, label in cache.plot.getAxis("left")._tickLevels[0]] == ["1", "2"]
    t = len(g.prompt.ids)
    assert cache.describe(1, 0).startswith("[layer 2 → cached token ")
    assert cache.describe(1, 0).endswith("from the prompt (prefill)")
    assert g.length > t and cache.describe(0, t).endswith("from decode step 1")
    size = kv_cache.cache_size(panel.model, g.length)
    assert f"{size.saving:g}× as much" in panel.cache.sizes.text()
    settle(panel.cache.measure_button.click)
    assert "with the cache" in panel.cache.timing.text()
    panel.set_step(4)
    assert panel.groups.grid.shape[:2] == (2, 2)
    assert "Key/value head 1 ← query heads 1, 2" in panel.groups.groups.text()


def test_bad_input_keeps_the_previous_result(panel):
    before, model = panel.writing.generation, panel.model
    settle(panel.prompt.setText, "   ")
    assert "Type a prompt" in panel.message.text() and panel.writing.generation is before
    settle(panel.use_model, "minilm")
    assert "is an encoder" in panel.message.text() and panel.model is model
    settle(panel.prompt.setText, "the " * 200)
    assert panel.message.level == "warning"
    assert "is 201 tokens, more than the 64 read here: tokens 1 to 137 were dropped" in panel.message.text()
    assert panel.writing.generation.length == prediction.context_limit(panel.model)


def test_cancel_a_load_keeps_the_model(panel, llama_folder):
    model = panel.model
    shared.forget(str(llama_folder))  # loaded afresh, in the worker, so there is a load to cancel
    panel.use_model(str(llama_folder))
    panel.row.cancel_button.click()
    idle()
    assert panel.model is model and "cancelled" in panel.message.text()
    assert panel.model.kind == models.DECODER


@pytest.mark.parametrize("top", [0.3, 0.85, 0.999])
def test_the_probability_axis_ends_at_one_and_every_value_shows(panel, top):
    """Next token's probability axis ran to 1.1, to leave room for a sure token's value after its
    bar: probabilities end at 1, and a value without room after its bar is written inside it."""
    from PySide6.QtWidgets import QApplication

    bars = panel.predictions.bars
    view = bars.plot.getViewBox()
    assert view.viewRange()[0][1] <= 1.0  # the model's own distribution
    rest = (1 - top) / 2
    bars.set_bars(["a", "b"], [top, rest], [True, False], rest)
    for _ in range(3):
        QApplication.processEvents()
    assert view.viewRange()[0][1] <= 1.0
    inside = view.sceneBoundingRect()
    for item in bars.values:
        drawn = item.mapRectToScene(item.boundingRect())
        assert inside.contains(drawn), (item.toPlainText(), drawn, inside)


def test_auto_stops_where_the_text_ends_and_on_a_new_run(panel, qtbot):
    w, page = panel.writing, panel.generate
    panel.set_step(2)
    page.auto_button.setChecked(True)  # the button is Auto's state, both ways
    assert w.auto.state.on
    qtbot.waitUntil(lambda: len(w.generation.chosen) > 0, timeout=patience_ms(30))
    settle(panel.prompt.setText, PROMPT + " again")  # a new run stops it
    assert not w.auto.state.on and not page.auto_button.isChecked() and not w.generation.chosen
    eos = panel.model.tokenizer.eos_token_id
    settle(w.text.apply, generation=w.generation, token=(eos, 0.5))
    page.auto_button.setChecked(True)
    idle()
    assert not page.auto_button.isChecked() and w.generation.chosen[-1].id == eos
    assert panel.message.level == "info" and "end-of-text" in panel.message.text()
    settle(page.undo_button.click)
    assert not w.generation.chosen and panel.message.text() == ""
    settle(panel.prompt.setText, "the " * 200)  # as long as the model reads: full at once
    page.auto_button.setChecked(True)
    settle(w.append_sample)
    assert not page.auto_button.isChecked() and "context is full" in panel.message.text()
    assert w.generation.length == prediction.context_limit(panel.model) and not w.generation.chosen


def test_auto_waits_for_a_timing_then_goes_on(panel, qtbot, monkeypatch):
    """Auto turned on while the KV cache step times a decode step: its next step waits for the
    timing to end (nothing else runs beside it), then appends."""
    import time

    timed = decode_timing.time_decode

    def slow(*args):
        time.sleep(0.6)  # longer than Auto's pause
        return timed(*args)

    monkeypatch.setattr(decode_timing, "time_decode", slow)
    w = panel.writing
    panel.set_step(3)
    panel.cache.measure_button.click()
    assert w.busy
    panel.generate.auto_button.setChecked(True)
    qtbot.waitUntil(lambda: len(w.generation.chosen) > 0, timeout=patience_ms(30))
    panel.generate.auto_button.setChecked(False)
    idle()
    assert "with the cache" in panel.cache.timing.text()


def test_auto_lands_each_token_pauses_keeping_them_and_resumes_with_the_seeds_draws(panel, qtbot):
    """Auto is one compute that appends token after token, each landing as it comes; turning it
    off keeps what was written, and on again goes on from there with the same draws as pressing
    "Append a drawn token" each time."""
    w, page = panel.writing, panel.generate
    panel.set_step(2)
    landed = []
    w.text.changed.connect(lambda: landed.append(len(w.generation.chosen)))
    page.auto_button.setChecked(True)
    qtbot.waitUntil(lambda: len(w.generation.chosen) >= 2, timeout=patience_ms(30))
    page.auto_button.setChecked(False)
    idle()
    paused = w.generation
    assert not w.busy and len(paused.chosen) >= 2 and landed[:2] == [1, 2]  # one token at a time
    qtbot.wait(400)  # longer than Auto's pause: nothing is appended while it is off
    assert w.generation is paused
    page.auto_button.setChecked(True)
    qtbot.waitUntil(lambda: len(w.generation.chosen) >= len(paused.chosen) + 2, timeout=patience_ms(30))
    page.auto_button.setChecked(False)
    idle()
    written = [c.id for c in w.generation.chosen]
    assert written[: len(paused.chosen)] == [c.id for c in paused.chosen]
    for _ in written:
        settle(w.undo)
    for _ in written:
        settle(w.append_sample)
    assert [c.id for c in w.generation.chosen] == written
