"""Panel "Inside a decoder" on a tiny random Llama with grouped-query attention: every number drawn
is core's, runs go through the worker, the ranking can be cancelled, bad input keeps the result."""

import sys
import threading

import numpy as np
import pytest
from PySide6.QtCore import Qt

from app.panels.inside_decoder import InsideDecoderPanel
from app.panels.inside_decoder.state import decoder
from core.interp.ablation import ablated, next_token_probs, run
from core.interp.induction import induction_test
from core.interp.lens import logit_lens
from core.interp.ranking import answer_token, rank_by_ablation, rank_by_attention
from core.models import gemma3, smollm2
from tests.app.conftest import idle, settle
from tests.tiny_models import head_zeroed_by_hand
from tests.waits import patience, patience_ms

pytestmark = pytest.mark.models
pytest.importorskip("torch")
pytest.importorskip("transformers")

PROMPT = "the cat sat on the mat because the cat"


@pytest.fixture
def panel(qtbot, llama_folder):
    p = InsideDecoderPanel()
    qtbot.addWidget(p)
    p.resize(1300, 850)
    p.show()
    idle()
    settle(p.use_model, llama_folder)
    settle(p.knock.prompt.setText, PROMPT)
    settle(p.rank.target.setText, " because")
    settle(p.rank.foil.setText, " the")
    return p


def hooks(model) -> int:
    """How many hooks the model's modules carry."""
    return sum(len(m._forward_pre_hooks) + len(m._forward_hooks) for m in model.module.modules())


def ids_of(model, text):
    return model.tokenizer(text)["input_ids"]


def test_the_lite_standalone_build_says_the_full_build_includes_smollm2(qtbot, monkeypatch):
    monkeypatch.setattr(sys, "frozen", True, raising=False)
    monkeypatch.setitem(sys.modules, "torch", None)
    p = InsideDecoderPanel()
    qtbot.addWidget(p)
    p.show()
    idle()
    assert "full build" in p.message.text() and "models add" not in p.message.text()
    assert not p.row.add_button.isVisibleTo(p)


def test_without_smollm2_the_panel_offers_to_add_it(qtbot, tmp_path, monkeypatch):
    from app.panels.next_token import NextTokenPanel

    monkeypatch.setenv("ATTENTION_LAB_DATA", str(tmp_path))  # an empty data folder: no SmolLM2
    assert smollm2.installed_folder() is None
    p = InsideDecoderPanel()
    qtbot.addWidget(p)
    p.show()
    idle()
    said = p.message.text()
    assert p.row.add_button.isVisibleTo(p) and "93 MB" in p.row.add_button.text()
    assert p.message.level == "info" and "Press Add" in said and "models add" not in said
    assert "No decoder loaded" in p.row.info.text()
    assert type(p.row) is type(NextTokenPanel().row)  # one model row, shared
    settle(p.row.add_button.click)  # offline in tests: says what to do, offers the button again
    assert "internet connection" in p.message.text() and p.message.level == "error"
    assert p.row.add_button.isVisibleTo(p) and p.knock.result is None
    assert not p.row.progress.isVisibleTo(p) and not p.row.cancel_button.isVisibleTo(p)
    assert list(smollm2.data_folder().iterdir()) == []


def test_a_successful_add_runs_every_step_on_smollm2(qtbot, tmp_path, monkeypatch):
    monkeypatch.setenv("ATTENTION_LAB_DATA", str(tmp_path))
    p = InsideDecoderPanel()
    qtbot.addWidget(p)
    p.show()
    idle()
    stages, said = [], []
    p.row.adder.progressed.connect(lambda done, total: stages.append(p.row.info.text()))
    p.row.adder.said.connect(lambda _: said.append(p.row.info.text()))

    def install(progress=None, detail=None):  # says how far each step got, as the real one does
        for done in range(len(smollm2.STEPS)):
            progress(done, len(smollm2.STEPS))
            detail(f"{done + 1} of 9 MB")
        return tmp_path

    used = []
    monkeypatch.setattr(smollm2, "install", install)
    monkeypatch.setattr(p.row, "load", used.append)
    settle(p.row.add_button.click)
    assert used == [smollm2.KEY] and stages[0] == smollm2.STEPS[0] + "…"
    assert said[:3] == [smollm2.STEPS[0] + "…", smollm2.STEPS[0] + "… 1 of 9 MB", smollm2.STEPS[1] + "…"]
    assert not p.row.add_button.isVisibleTo(p) and not p.row.cancel_button.isVisibleTo(p)


def test_gemma3_is_offered_in_the_model_box_and_added_only_once_its_terms_are_accepted(
    qtbot, tmp_path, monkeypatch
):
    monkeypatch.setenv("ATTENTION_LAB_DATA", str(tmp_path))
    p = InsideDecoderPanel()
    qtbot.addWidget(p)
    p.show()
    idle()
    where = p.row.combo.findData(gemma3.KEY)
    assert where >= 0 and p.row.combo.itemText(where) == gemma3.NAME
    assert "choose it to add it" in p.row.combo.itemData(where, Qt.ItemDataRole.ToolTipRole)
    settle(p.row.combo.activated.emit, where)  # not there yet: its Add button, with its terms
    assert p.row.add_button.isVisibleTo(p) and "Gemma's terms" in p.row.add_button.text()
    assert "accept Gemma's terms" in p.message.text() and "238 MB" in p.message.text()
    calls, used = [], []

    def install(progress=None, detail=None, accept_terms=False):
        calls.append(accept_terms)
        progress(len(gemma3.STEPS), len(gemma3.STEPS))
        return tmp_path

    monkeypatch.setattr(gemma3, "install", install)
    monkeypatch.setattr(p.row, "load", used.append)
    monkeypatch.setattr(p.row.adder, "agree", lambda: False)
    settle(p.row.add_button.click)  # declined: nothing is fetched, the button stays
    assert calls == [] and p.row.add_button.isVisibleTo(p) and "not accepted" in p.row.info.text()
    monkeypatch.setattr(p.row.adder, "agree", lambda: True)
    settle(p.row.add_button.click)
    assert calls == [True] and used == [gemma3.KEY]
    assert not p.row.add_button.isVisibleTo(p)


def test_an_encoder_is_refused_and_the_last_result_stays(panel):
    before = panel.knock.result
    settle(panel.use_model, "minilm")
    assert "is an encoder" in panel.message.text()
    assert panel.knock.result is before and panel.knock.state.source != "minilm"
    assert not panel.row.add_button.isVisibleTo(panel)


def test_knocking_out_heads_equals_core(panel, llama_folder):
    model = decoder(llama_folder)
    ids = ids_of(model, PROMPT)
    settle(panel.knock.grid.clicked.emit, 1, 2)
    settle(panel.knock.grid.clicked.emit, 0, 3)
    r = panel.knock.result
    assert r.heads == ((0, 3), (1, 2))
    with ablated(model, [(0, 3), (1, 2)]):
        expected = next_token_probs(model, ids)
    np.testing.assert_allclose(r.ablated, expected, atol=1e-6)
    np.testing.assert_allclose(r.clean, next_token_probs(model, ids), atol=1e-6)
    assert "Knocked out (zero): 1.4, 2.3." in panel.knock.summary.text()
    settle(panel.knock.grid.clicked.emit, 1, 2)  # a second click puts the head back
    assert panel.knock.result.heads == ((0, 3),)
    panel.knock.layer.setValue(2)
    settle(panel.knock.layer_button.click)
    assert panel.knock.result.heads == ((0, 3), (1, 0), (1, 1), (1, 2), (1, 3))
    settle(panel.knock.reset.click)
    assert panel.knock.result.heads == () and panel.knock.result.ablated is panel.knock.result.clean
    assert not any(m._forward_pre_hooks for m in model.module.modules())  # pre-hooks are ours only


def test_mean_ablation(panel, llama_folder):
    settle(panel.knock.mode.setCurrentIndex, 1)
    settle(panel.knock.grid.clicked.emit, 0, 0)
    r = panel.knock.result
    assert r.mode == "mean" and r.heads == ((0, 0),)
    assert not np.allclose(r.ablated, r.clean)


def test_target_equal_to_foil_is_refused_and_the_result_stays(panel):
    before = panel.knock.result
    settle(panel.rank.foil.setText, "because")
    assert "same token" in panel.message.text()
    assert panel.knock.result is before


def test_the_ranking_runs_in_the_worker_and_equals_core(panel, llama_folder, qtbot):
    panel.set_step(1)
    prompt = PROMPT + " the"  # a prompt no other test ranks: not kept from one
    settle(panel.knock.prompt.setText, prompt)
    settle(panel.rank.target.setText, " the")
    settle(panel.rank.foil.setText, " because")
    values = []
    panel.rank.progress.valueChanged.connect(values.append)
    settle(panel.rank.ranked.setChecked, True)
    assert panel.knock.state.ranked  # in the state: a saved lesson and a script reproduce it
    model = decoder(llama_folder)
    ids = ids_of(model, prompt)
    expected = rank_by_ablation(
        model, ids, answer_token(model.tokenizer, " the"), answer_token(model.tokenizer, " because")
    )
    np.testing.assert_allclose(panel.rank.result.ranking.drop, expected.drop, atol=1e-5)
    np.testing.assert_allclose(panel.rank.effect_map.values, expected.drop, atol=1e-5)
    assert values[-1] == model.n_layers
    assert "Every head tested" in panel.message.text()
    best = expected.ranking.best
    assert f"1. layer {best.layer + 1}, head {best.head + 1}" in panel.rank.by_effect.text()
    _, attentions = run(model, ids, attentions=True)
    looking = rank_by_attention(attentions, ids, answer_token(model.tokenizer, " the"))
    np.testing.assert_allclose(panel.rank.weight_map.values, looking.scores, atol=1e-6)
    settle(panel.rank.target.setText, " it")  # another target: ranked again for it
    again = rank_by_ablation(
        model, ids, answer_token(model.tokenizer, " it"), answer_token(model.tokenizer, " because")
    )
    np.testing.assert_allclose(panel.rank.effect_map.values, again.drop, atol=1e-5)
    settle(panel.rank.ranked.setChecked, False)
    assert np.isnan(panel.rank.effect_map.values).all()


def test_a_cancelled_ranking_leaves_the_model_clean(panel, llama_folder, monkeypatch):
    from core.interp import ranking

    model = decoder(llama_folder)
    ids = ids_of(model, PROMPT)
    clean = run(model, ids)[0]
    before = hooks(model)
    gate = threading.Event()
    real = ranking.rank_by_ablation

    def held_after_the_first_layer(*args):
        *rest, progress, first = args

        def tick(done, total):
            if done == 1:
                gate.wait(patience(30))  # the first layer has run with its heads knocked out
            progress(done, total)

        return real(*rest, tick, first)

    monkeypatch.setattr(ranking, "rank_by_ablation", held_after_the_first_layer)
    panel.set_step(1)
    panel.rank.ranked.setChecked(True)
    assert panel.rank.cancel_button.isEnabled()
    panel.rank.cancel_button.click()
    gate.set()
    idle(120)
    assert "cancelled" in panel.message.text() and panel.rank.result.ranking is None
    assert not panel.rank.ranked.isChecked() and not panel.knock.state.ranked
    assert hooks(model) == before
    np.testing.assert_array_equal(run(model, ids)[0], clean)
    assert not panel.rank.cancel_button.isEnabled()


def test_logit_lens_equals_core(panel, llama_folder):
    panel.set_step(2)
    settle(panel.lens.prompt.setText, PROMPT)
    settle(panel.lens.target.setText, " because")
    model = decoder(llama_folder)
    lens = logit_lens(model, ids_of(model, PROMPT), answer_token(model.tokenizer, " because").id)
    np.testing.assert_allclose(panel.lens.grid.values, lens.top_probs, atol=1e-6)
    assert panel.lens.grid.texts[0] == model.tokenizer.decode([int(lens.top_ids[0, 0])]).replace(" ", "␣")[:4]
    np.testing.assert_array_equal(panel.lens.rank_line.xData, lens.target_rank)
    settle(panel.lens.target.setText, "sat")  # two pieces: refused, the lens stays without a rank
    assert "Target: ' sat' is 2 tokens here (' s' + 'at'), not one" in panel.message.text()
    assert panel.lens.summary.text().startswith("Target: ' sat' is 2 tokens")
    np.testing.assert_allclose(panel.lens.grid.values, lens.top_probs, atol=1e-6)
    assert panel.lens.rank_line.xData is None or len(panel.lens.rank_line.xData) == 0


def test_sinks_and_the_dropped_first_token(panel):
    panel.set_step(3)
    settle(panel.sinks.prompt.setText, PROMPT)
    r = panel.sinks.result
    assert r.scores.shape == (2, 4) and np.all((r.scores >= 0) & (r.scores <= 1))
    title = panel.sinks.dropped.plot.getPlotItem().titleLabel.text
    assert f"Without {r.prompt.pieces[0].replace(' ', '␣')}" in title
    settle(panel.sinks.prompt.setText, "the")
    assert "at least two tokens" in panel.message.text() and panel.sinks.result is r


def test_induction_with_a_head_knocked_out(panel, llama_folder):
    panel.set_step(4)
    settle(panel.induction.n.setValue, 8)
    clean = panel.induction.result.clean
    settle(panel.induction.induction_map.clicked.emit, 1, 1)
    r = panel.induction.result
    expected = induction_test(decoder(llama_folder), clean.ids, [(1, 1)])
    assert r.ablated.loss_second == pytest.approx(expected.loss_second, rel=1e-6)
    assert "With 1 head(s) knocked out" in panel.induction.summary.text()
    settle(panel.induction.reset.click)
    assert panel.induction.result.ablated is None


def test_a_head_map_crosses_heads_knocked_before_its_plot_was_built(qtbot):
    from app.panels.inside_decoder.views import HeadMap

    head_map = HeadMap("scores")
    qtbot.addWidget(head_map)
    head_map.set_scores(np.zeros((2, 3)))
    head_map.set_knocked([(1, 2)])
    assert not head_map.built  # a hidden step's map costs nothing until shown
    head_map.show()
    qtbot.waitUntil(lambda: head_map.built, timeout=patience_ms(5))
    x, y = head_map.crosses.getData()
    assert list(x) == [2.5] and list(y) == [1.5]


def zeroed_by_hand(model, ids, layer, head, positions):
    """Next-token probabilities with ``head``'s slice of ``layer``'s o_proj input set to 0 at
    ``positions``, by a hook written here."""

    with head_zeroed_by_hand(model.module, layer, head, positions):
        return next_token_probs(model, ids)


def test_the_first_token_is_left_alone_unless_asked(panel, llama_folder):
    model = decoder(llama_folder)
    ids = ids_of(model, PROMPT)
    settle(panel.knock.grid.clicked.emit, 0, 1)
    r = panel.knock.result
    assert not r.first and not panel.knock.first.isChecked()
    kept = zeroed_by_hand(model, ids, 0, 1, slice(1, None))
    np.testing.assert_allclose(np.log(r.ablated), np.log(kept), atol=1e-5)
    settle(panel.knock.first.setChecked, True)
    r = panel.knock.result
    assert r.first and panel.rank.first.isChecked()  # steps 1 and 2 share the choice
    np.testing.assert_allclose(
        np.log(r.ablated), np.log(zeroed_by_hand(model, ids, 0, 1, slice(None))), atol=1e-4
    )
    assert np.abs(np.log(r.ablated) - np.log(kept)).max() > 1e-4
    assert "Knocked out (zero, first token too): 1.2." in panel.knock.summary.text()


def test_the_ranking_honours_the_first_token_choice(panel, llama_folder):
    model = decoder(llama_folder)
    ids = ids_of(model, PROMPT)
    target, foil = answer_token(model.tokenizer, " because"), answer_token(model.tokenizer, " the")
    panel.set_step(1)
    assert "first token is left alone" in panel.rank.first_note.text()
    settle(panel.rank.ranked.setChecked, True)
    kept = panel.rank.result.ranking
    np.testing.assert_allclose(kept.drop, rank_by_ablation(model, ids, target, foil).drop, atol=1e-5)
    assert "first token left alone" in panel.rank.by_effect.text()
    settle(panel.rank.first.setChecked, True)  # ranked again, for the other choice
    every = rank_by_ablation(model, ids, target, foil, first=True)
    np.testing.assert_allclose(panel.rank.result.ranking.drop, every.drop, atol=1e-5)
    assert panel.rank.result.ranking.first and "first token knocked out too" in panel.rank.by_effect.text()
    assert np.abs(kept.drop - every.drop).max() > 1e-4


def test_the_copy_boundary_sits_before_the_second_copys_first_target(panel):
    panel.set_step(4)
    settle(panel.induction.n.setValue, 8)
    test = panel.induction.result.clean
    x, y = panel.induction.clean_line.getData()
    line = panel.induction.copy_line.value()
    assert list(x) == list(range(1, 16)) and line == 7.5  # each loss at its target's position
    second = x > line
    assert x[second][0] == 8  # target 8 is the second copy's first token, on the second copy's side
    assert y[second].mean() == pytest.approx(test.loss_second, rel=1e-6)
    assert y[~second].mean() == pytest.approx(test.loss_first, rel=1e-6)


def test_the_rankings_progress_says_what_it_counts(panel, qtbot):
    """Beside Cancel sat an empty box, the progress bar before the first ranking: it says the heads
    are not ranked, that they are once the ranking lands, that they are again for a new target
    (the box is part of the state), and not once the box is unticked."""
    panel.set_step(1)
    bar = panel.rank.progress
    qtbot.waitUntil(bar.isVisible, timeout=patience_ms(5))
    assert bar.text() == "not ranked" and bar.toolTip()
    settle(panel.rank.ranked.setChecked, True)
    assert bar.text() == "all ranked" and bar.value() == bar.maximum()
    settle(panel.rank.target.setText, " it")
    assert bar.text() == "all ranked"
    settle(panel.rank.ranked.setChecked, False)
    assert bar.text() == "not ranked"


def test_the_lens_says_when_its_top_token_is_a_bare_space(panel):
    """SmolLM2's lens reads "␣" at up to 99 % in layers 7–23 at the last position: a cell showing
    a blank sign alone is a token of whitespace only, and the view says so under the grid and in
    the cell's readout."""
    from dataclasses import replace

    settle(panel.set_step, 2)
    r = panel.lens.result
    pieces = r.top_pieces.copy()
    layers = pieces.shape[0]
    pieces[:, :] = "x"
    pieces[:, -1] = " "  # after every layer, at the last position
    pieces[0, 0] = "\n"
    panel.lens.draw(replace(r, top_pieces=pieces))
    text = panel.lens.blank_note.text()
    assert panel.lens.blank_note.isVisibleTo(panel)
    assert "␣ alone is a space" in text and "↵ alone is a line break" in text
    assert f"after layers 1–{layers}" in text and "1 more cell" in text
    assert "a space" in panel.lens.grid.describe(1, pieces.shape[1] - 1)
    assert "a space" not in panel.lens.grid.describe(layers - 1, 0)
    pieces[:, :] = "x"
    panel.lens.draw(replace(r, top_pieces=pieces))
    assert not panel.lens.blank_note.isVisibleTo(panel)  # no whitespace on top: no note


def test_whitespace_tokens_are_named():
    from app.panels.inside_decoder.lens import blank_name, layer_runs

    assert [blank_name(p) for p in (" ", "   ", "\n", "\u00a0", " \n", " x", "")] == [
        "a space", "3 spaces", "a line break", "a no-break space", "whitespace only", None, None,
    ]  # fmt: skip
    assert layer_runs([1, 7, 8, 9, 23]) == "1, 7–9, 23"


def test_step_six_compares_the_model_with_another_decoder_on_the_same_prompts(panel, tmp_path, llama_folder):
    from app.panels.inside_decoder.compare import compare_script
    from core.interp.compare import profile, side_by_side
    from core.models import load_model
    from tests.tiny_models import save_tiny_decoder

    gemma = str(save_tiny_decoder(tmp_path / "gemma", "gemma3_text"))
    settle(panel.use_model, gemma)  # opened once: the row remembers it
    llama = llama_folder
    settle(panel.use_model, llama)
    settle(panel.set_step, 5)
    s = panel.compare.state
    assert (s.source, s.other, s.prompt, s.target, s.foil) == (llama, gemma, PROMPT, " because", " the")
    assert panel.compare.other.currentData() == gemma
    r = panel.compare.result
    expected = [
        profile(load_model(m), PROMPT, " because", " the", s.sink_prompt, s.n, s.seed) for m in (llama, gemma)
    ]
    for got, want in zip((r.first, r.second), expected, strict=True):
        np.testing.assert_allclose(got.answer, want.answer, atol=1e-6)
        np.testing.assert_allclose(got.induction, want.induction, atol=1e-6)
    x, y = panel.compare.points["sink"][1].getData()
    np.testing.assert_allclose(x, expected[1].depth.ravel())
    np.testing.assert_allclose(y, expected[1].sink.ravel(), atol=1e-6)
    assert panel.compare.summary.text() == "\n\n".join(side_by_side(*expected))
    assert "profile(m, prompt, target, foil, sink_prompt, n, seed)" in compare_script(s).body
    settle(panel.compare.other.activated.emit, 0)  # the same choice again: nothing recomputed
    assert panel.compare.result is r
