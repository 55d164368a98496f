"""Panel "Which words mattered" on a tiny random Llama: every strip is core's methods on the
prompt (attention checked against transformers' own weights), another layer costs no new
gradients, a token taken away changes the table, bad input keeps the last result."""

import numpy as np
import pytest

from app.panels.words import WordsPanel
from core.interp import token_scores as ts
from core.models import load_model
from tests.app.conftest import idle, settle
from tests.waits import patience_ms

pytestmark = pytest.mark.models
torch = pytest.importorskip("torch")

PROMPT = "the cat sat on the mat because the cat"


@pytest.fixture
def panel(qtbot, llama_folder):
    p = WordsPanel()
    qtbot.addWidget(p)
    p.resize(1300, 850)
    p.show()
    idle()
    settle(p.use_model, llama_folder)
    settle(p.live.apply, prompt=PROMPT, target=" because", foil=" the", steps=4)
    return p


def test_the_strips_are_each_methods_scores(panel, llama_folder):
    r = panel.live.result
    assert r is not None, panel.message.text()
    model = load_model(llama_folder)
    ids = model.tokenizer(PROMPT)["input_ids"]
    with torch.no_grad():
        weights = model.module(input_ids=torch.tensor([ids]), output_attentions=True).attentions
    strips = panel.attention.strips.values
    np.testing.assert_allclose(strips[0], weights[-1][0, :, -1].double().mean(0).numpy(), atol=1e-6)
    answer = ts.Answer(
        *(model.tokenizer(t, add_special_tokens=False)["input_ids"][0] for t in (" because", " the"))
    )
    np.testing.assert_allclose(strips[1], ts.rollout(ts.attention_rows(model, ids)), atol=1e-9)
    settle(panel.set_step, 1)
    np.testing.assert_allclose(
        panel.gradients.strips.values[0], ts.grad_x_input(model, ids, answer)[0], atol=1e-6
    )
    ig = ts.integrated_gradients(model, ids, answer, 4)
    np.testing.assert_allclose(panel.gradients.strips.values[1], ig.scores, atol=1e-6)
    assert f"{ig.gap:.4f}" in panel.gradients.summary.text() and ts.IG_RULE in panel.gradients.summary.text()
    assert "Tick the box" in panel.gradients.summary.text() and panel.gradients.gap_curve.xData is None
    landed = []
    panel.live.changed.connect(lambda: landed.append(panel.live.result.gaps))
    settle(panel.gradients.settles.setChecked, True)  # the gap at 8 … 256 steps, landing count by count
    gaps = panel.live.result.gaps
    for gap, k in zip(gaps, ts.GAP_STEPS, strict=True):
        assert gap == pytest.approx(ts.integrated_gradients(model, ids, answer, k).gap, abs=1e-9)
    assert panel.gradients.gap_curve.yData.tolist() == gaps.tolist()
    assert any(g is not None and np.isnan(g).any() for g in landed)  # partial curves came first
    assert "At 8, 16, 32, 64, 128, 256 steps the gap is" in panel.gradients.summary.text()
    settle(panel.set_step, 3)
    matrix = panel.agreement.matrix.values
    assert matrix[0, 4] == pytest.approx(ts.spearman(strips[0], ts.occlusion(model, ids, answer)))


def test_another_head_reads_the_kept_run_and_a_token_taken_away_fills_the_table(panel):
    calls = []
    panel.live.progressed.connect(lambda done, total: calls.append(done))
    settle(panel.attention.head.setValue, 2)
    total = 4 + len(panel.live.result.labels)  # the steps, then a run per token
    assert calls == [total] and "H2" in panel.attention.strips.row_labels[0]  # done at once: no new runs
    settle(panel.set_step, 2)
    settle(panel.occlusion.strips.clicked.emit, 0, 3)
    assert panel.live.state.removed == 4 == panel.occlusion.removed.value()
    table = panel.occlusion.table
    assert table.rowCount() >= 5 and table.item(0, 2).text() != ""
    with_p = [float(table.item(k, 1).text()) for k in range(5)]
    assert with_p == sorted(with_p, reverse=True)


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"layer": 9}, "does not exist"),
        ({"foil": " because"}, "same token"),
        ({"target": "", "foil": " the"}, "name the target too"),
        ({"steps": 0}, "1 to 512 steps"),
        ({"prompt": "a"}, "one token"),
    ],
)
def test_bad_input_keeps_the_last_result(panel, change, message):
    before = panel.live.result
    settle(panel.live.apply, **change)
    assert message in panel.message.text() and panel.live.result is before


def test_a_long_run_can_be_cancelled_and_the_controls_go_back(panel):
    from app import worker
    from tests.waits import patience

    before = panel.live.result
    assert panel.progress.state == "done" and not panel.cancel.isEnabled()
    panel.live.apply(steps=500)
    assert panel.cancel.isEnabled()
    panel.cancel.click()
    assert worker.wait_idle(patience(60))
    assert panel.live.result is before and panel.progress.state == "stopped"
    assert panel.gradients.steps.value() == 4 and not panel.cancel.isEnabled()


def test_a_shorter_prompt_keeps_its_run_and_says_the_token_is_gone(panel):
    settle(panel.live.apply, removed=12)
    settle(panel.set_step, 2)
    settle(panel.live.apply, prompt="the cat sat")
    r = panel.live.result
    assert r.removed == 0 and "past the prompt's end" in panel.message.text()
    assert panel.occlusion.table.item(0, 2).text() == ""


def test_the_built_in_prompts_fill_in_one_by_one_and_a_cancel_keeps_those_done(
    panel, llama_folder, monkeypatch, qtbot
):
    pairs = (("the cat sat on the", " because", " the"), ("the mat because the", " it", " was"),
             ("on the mat the cat", " the", " it"))  # fmt: skip
    monkeypatch.setattr(ts, "AGREEMENT_SET", pairs)
    arrived = []
    panel.live.changed.connect(lambda: arrived.append(panel.live.result.over_set))
    settle(panel.set_step, 3)
    assert "tick the box" in panel.agreement.summary.text()
    assert np.isnan(panel.agreement.set_matrix.values).all()
    settle(panel.agreement.over_set.setChecked, True)
    done = [a for a in arrived if a is not None]
    assert [len(a.prompts) for a in done] == [1, 2, 3]  # each prompt as it is scored, in order
    model = load_model(llama_folder)
    expected = np.array([ts.agreement_of(model, *pair, steps=4) for pair in pairs])
    np.testing.assert_allclose(done[-1].each, expected, atol=1e-9)
    np.testing.assert_allclose(panel.agreement.set_matrix.values, np.nanmean(expected, 0), atol=1e-9)
    assert "Averaged over the built-in prompts, " in panel.agreement.summary.text()
    assert panel.agreement.set_matrix.plot.titleLabel.text == "Over 3 of 3 built-in prompts"
    arrived.clear()
    panel.live.apply(steps=5)  # another IG: every prompt again; cancelled after the first lands
    qtbot.waitUntil(lambda: any(a is not None and a.steps == 5 for a in arrived), timeout=patience_ms(60))
    panel.live.cancel()
    idle()
    kept = panel.live.result.over_set
    assert kept.steps == 5 and len(kept.prompts) < 3
    assert f"so far ({len(kept.prompts)} of 3 prompts)" in panel.agreement.summary.text()


def test_step_five_explains_two_sentences_similarity_in_the_bundled_encoder(panel):
    from core.interp.similarity import similarity_scores

    assert panel.encoder.result is None  # nothing computed before the step is shown
    settle(panel.set_step, 4)
    r = panel.encoder.result
    assert r is not None, panel.message.text()
    s = panel.encoder.state
    expected = similarity_scores(load_model("minilm"), s.first, s.second, s.steps)
    np.testing.assert_allclose(
        panel.encoder.strips.values, np.vstack([expected.methods[m] for m in ts.METHODS]), atol=1e-6
    )
    assert panel.encoder.strips.col_labels[0] == "[CLS]"
    assert f"Cosine <b>{expected.cosine:.4f}</b>" in panel.encoder.summary.text()
    settle(panel.encoder.live.apply, second="  ")
    assert "Type both sentences" in panel.message.text() and panel.encoder.result is r
