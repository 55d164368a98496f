"""Panel "Inside a head" on a tiny random Llama: every number drawn is core's and the model's own,
runs go through the worker, bad input keeps the last result, an encoder gets step 1 only."""

import numpy as np
import pytest

from app.panels.inside_head import InsideHeadPanel
from core.interp.ranking import answer_token, rank_by_ablation
from core.models import load_model
from tests.app.conftest import idle, settle
from tests.app.readable import blank_beside
from tests.sums import assert_adds_up
from tests.waits import patience_ms

pytestmark = pytest.mark.models
torch = pytest.importorskip("torch")

PROMPT = "the cat sat on the mat because the cat"  # 14 tokens


@pytest.fixture
def panel(qtbot, llama_folder):
    p = InsideHeadPanel()
    qtbot.addWidget(p)
    p.resize(1300, 850)
    p.show()
    idle()
    settle(p.use_model, llama_folder)
    assert (p.live.state.layer, p.live.state.head) == (1, 1) and p.live.result is not None  # a head it has
    settle(p.prompt.setText, PROMPT)
    settle(p.live.apply, layer=2, head=3, query=0, key=3)
    settle(p.live.apply, target=" because", foil=" the")
    return p


def model_weights(folder, text):
    model = load_model(folder)
    ids = model.tokenizer(text)["input_ids"]
    with torch.no_grad():
        out = model.module(input_ids=torch.tensor([ids]), output_attentions=True)
    return model, ids, out


def test_step_one_shows_the_models_own_weight_and_a_click_follows_a_cell(panel, llama_folder):
    _, _, out = model_weights(llama_folder, PROMPT)
    step = panel.live.result.step
    assert (step.layer, step.head, step.i, step.j) == (1, 2, 13, 2)
    assert step.weight == pytest.approx(float(out.attentions[1][0, 2, 13, 2]), abs=1e-6)
    np.testing.assert_allclose(
        np.nan_to_num(panel.real.weight_map.values), out.attentions[1][0, 2].numpy(), atol=1e-6
    )
    assert "score" in panel.real.working.text() and "softmax" in panel.real.working.text()
    assert "q·k = " in panel.real.weight_map.describe(13, 2)
    settle(panel.real.weight_map.clicked.emit, 5, 1)
    assert (
        (panel.live.state.query, panel.live.state.key)
        == (6, 2)
        == (panel.live.state.query, panel.live.state.key)
    )
    assert panel.live.result.step.weight == pytest.approx(float(out.attentions[1][0, 2, 5, 1]), abs=1e-6)


def test_why_here_and_the_direct_shares_add_up_to_the_real_numbers(panel, llama_folder):
    model, ids, out = model_weights(llama_folder, PROMPT)
    r, score = panel.live.result.parts, panel.live.result.step.score
    assert_adds_up(r.split.query_totals, score)
    assert_adds_up(r.split.key_totals, score)
    panel.set_step(1)
    shown = panel.why.query_map.values
    assert shown.shape == (1, 5) and np.isfinite(shown).all() and "Score" in panel.why.summary.text()
    panel.set_step(3)
    logits = out.logits[0, -1].double()
    target, foil = r.target.id, r.foil.id
    assert_adds_up(r.direct.values, float(logits[target] - logits[foil]))
    np.testing.assert_allclose(panel.direct.direct_map.values[:, :4], r.direct.heads)
    settle(panel.direct.knockout.setChecked, True)
    assert panel.live.state.knockout  # in the state: a saved lesson and a script reproduce it
    expected = rank_by_ablation(
        model,
        ids,
        answer_token(model.tokenizer, " because", PROMPT),
        answer_token(model.tokenizer, " the", PROMPT),
    )
    np.testing.assert_allclose(panel.direct.total_map.values[:, :4], expected.drop, atol=1e-5)


def test_what_it_writes_lists_tokens_and_splits_the_copy_by_key(panel):
    panel.set_step(2)
    w = panel.live.result.parts.writes
    assert panel.writes.up.rowCount() == 10 and len(w.paths) == len(panel.live.result.labels)
    assert_adds_up(w.paths, w.whole)
    assert "rank" in panel.writes.summary.text()


def test_bad_input_keeps_the_result_and_a_later_key_is_masked(panel):
    before = panel.live.result
    settle(panel.layer.setValue, 9)
    assert "Layer 9 does not exist" in panel.message.text() and panel.live.result is before
    settle(panel.layer.setValue, 2)
    settle(panel.live.apply, query=3, key=9)
    step = panel.live.result.step
    assert step.masked and step.weight == 0 and "mask" in panel.message.text()
    settle(panel.prompt.setText, " ".join(["the"] * 80))  # past the tiny model's 64 tokens: cut, and said
    assert panel.live.result.cut.startswith(
        "The prompt is 80 tokens, more than the 64 read here: tokens 1 to 16"
    )
    assert panel.message.level == "warning" and panel.message.text() == panel.live.result.cut


def test_an_encoder_gets_step_one_and_steps_two_to_four_say_why_not(panel):
    settle(panel.use_model, "minilm")
    settle(panel.prompt.setText, "The trophy did not fit in the suitcase.")
    settle(panel.live.apply, layer=4, head=2, query=5, key=3)
    assert panel.live.result.step.weight > 0
    r = panel.live.result.parts
    assert r.split is None and "encoder" in r.why_not
    panel.set_step(1)
    assert "encoder" in panel.message.text()


def test_without_smollm2_the_panel_offers_to_add_it_and_then_uses_it(qtbot, tmp_path, monkeypatch):
    from core.models import smollm2

    monkeypatch.setenv("ATTENTION_LAB_DATA", str(tmp_path))  # an empty data folder: no SmolLM2
    p = InsideHeadPanel()
    qtbot.addWidget(p)
    p.show()
    idle()
    assert "Press Add" in p.message.text() and p.row.add_button.isVisibleTo(p)
    used = []
    monkeypatch.setattr(smollm2, "install", lambda progress=None, detail=None: tmp_path)
    monkeypatch.setattr(p.row, "load", used.append)
    settle(p.row.add_button.click)
    assert used == [smollm2.KEY]


def test_cancelling_the_first_run_before_it_lands_leaves_the_panel_waiting(qtbot, llama_folder):
    """Cancel the first run before any result (held until then): the panel still says it is
    loading, and the next run lands and is described."""
    import threading

    from app import worker

    p = InsideHeadPanel()
    qtbot.addWidget(p)
    p.show()
    idle()
    hold, compute = threading.Event(), p.live.compute
    p.live.compute = lambda state, **more: (hold.wait(patience_ms(30) / 1000), compute(state, **more))[1]
    p.use_model(llama_folder)
    qtbot.waitUntil(lambda: p.live.task is not None, timeout=patience_ms(30))
    assert p.live.result is None and p.live.cancel()
    assert p.info.text() == "Loading the model…"
    hold.set()
    worker.wait_idle(patience_ms(30) / 1000)
    settle(p.row.loaded.emit, p.row.model)  # the controls went back: the model, given again, runs
    assert p.live.result is not None and p.info.text().endswith("layers × 4 heads")


def test_gemma2s_caps_are_shown_where_they_apply(panel, tmp_path):
    """Gemma 2 caps its scores and its logits: step 1 writes the cap out, steps 2 and 4 say their
    sums are of the numbers before it."""
    from tests.tiny_models import save_tiny_decoder

    settle(panel.use_model, str(save_tiny_decoder(tmp_path / "gemma2", "gemma2")))
    settle(panel.live.apply, layer=2, head=1, query=0, key=3)
    settle(panel.live.apply, target=" because", foil=" the")
    step = panel.live.result.step
    assert step.cap and f"{step.cap:g}·tanh" in panel.real.working.text()
    panel.set_step(1)
    assert "before the cap" in panel.message.text()
    panel.set_step(3)
    assert "cap" in panel.message.text()


def test_the_knockout_progress_says_what_it_counts(panel, qtbot):
    """Beside "Knock out each head" the progress bar says the knock-out has not run, that it is
    done, and runs it again for a new prompt (the box is part of the state); Cancel stops it and
    unticks the box, the maps back on the result on screen."""
    panel.set_step(3)
    box, bar = panel.direct.knockout, panel.direct.progress
    qtbot.waitUntil(box.isVisible, timeout=patience_ms(5))
    assert not blank_beside(box), blank_beside(box)
    assert bar.text() == "not run yet" and bar.toolTip() and not panel.direct.cancel.isEnabled()
    settle(box.setChecked, True)
    assert bar.text() == "every head knocked out" and bar.value() == bar.maximum()
    before = panel.direct.total_map.values.copy()
    settle(panel.prompt.setText, PROMPT + " sat")
    assert bar.text() == "every head knocked out" and not np.array_equal(
        panel.direct.total_map.values, before
    )
    settle(box.setChecked, False)
    assert bar.text() == "not run yet" and np.isnan(panel.direct.total_map.values).all()


def test_cancelling_the_knockout_unticks_the_box_and_keeps_the_maps_on_screen(panel, monkeypatch, qtbot):
    import time

    from core.interp import ranking

    def held(model, ids, target, foil, mode, means, progress, first):  # layer 0 until the cancel
        while True:
            progress(0, model.n_layers)
            time.sleep(0.01)

    monkeypatch.setattr(ranking, "rank_by_ablation", held)
    settle(panel.set_step, 3)
    before = panel.live.result.parts
    panel.direct.knockout.setChecked(True)
    qtbot.waitUntil(panel.direct.cancel.isEnabled, timeout=patience_ms(10))
    panel.direct.cancel.click()
    idle()
    assert not panel.direct.knockout.isChecked() and not panel.live.state.knockout
    assert panel.live.result.parts is before and np.isnan(panel.direct.total_map.values).all()
    assert panel.direct.progress.text() == "stopped at layer 0" and not panel.direct.cancel.isEnabled()


def test_step_one_lands_before_steps_two_to_four_in_the_one_state(panel):
    landed = []
    panel.live.changed.connect(lambda: landed.append(panel.live.result))
    settle(panel.live.apply, query=4, key=2)
    assert [r.parts is None for r in landed] == [True, False]  # step 1 first, then the rest
    assert landed[0].step.i == landed[1].step.i == 3 and landed[1].parts.split is not None


def test_an_answer_the_model_cannot_judge_leaves_steps_one_to_three_and_step_four_says_why(panel):
    settle(panel.set_step, 3)
    settle(panel.live.apply, target=" the", foil=" the")
    r = panel.live.result
    assert r.step is not None and r.parts.split is not None and r.parts.direct is None
    assert "same token" in r.parts.unanswered and "same token" in panel.message.text()
    assert panel.direct.summary.text() == r.parts.unanswered
