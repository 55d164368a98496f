"""Panel "Real model": every view shows what core computes; loads and runs go through the worker."""

import sys

import numpy as np
import pytest

from app.panels.model import ModelPanel
from app.panels.model.patterns import HINT
from app.widgets.attention_lines import LEVELS, MIN_WEIGHT
from core.maths.head_analysis import drop_special, find_pattern, only_part, to_words
from core.maths.head_tiles import head_tiles
from core.models.loaded import shared
from tests.app.conftest import idle, settle
from tests.tiny_models import save_tiny_gpt2
from tests.waits import patience_ms

pytestmark = pytest.mark.models
pytest.importorskip("torch")
pytest.importorskip("transformers")

TROPHY = "The trophy didn't fit in the suitcase because it was too big."


@pytest.fixture(scope="module")
def gpt2_folder(tmp_path_factory):
    return save_tiny_gpt2(tmp_path_factory.mktemp("tiny-gpt2"))


@pytest.fixture
def panel(panel):
    """The shared panel fixture (its first show loads the model), checked to have a result."""
    assert panel.model is not None and panel.result is not None
    return panel


def test_first_show_loads_in_the_background_with_progress(qtbot):
    shared.clear()
    p = ModelPanel()
    qtbot.addWidget(p)
    assert p.model is None and not p.loader.busy  # nothing is loaded before the panel is shown
    steps = []
    p.show()
    loader = p.loader
    assert loader.busy and loader.progress.isVisibleTo(p) and loader.cancel_button.isVisibleTo(p)
    p.loader.loads.task.progressed.connect(lambda done, total: steps.append((done, total)))
    idle()
    assert p.model.name == "all-MiniLM-L6-v2" and not p.loader.progress.isVisibleTo(p)
    assert steps and steps[-1] == (5, 5)
    assert "6 layers × 12 heads" in p.loader.info.text()
    assert p.result.labels[:3] == ("[CLS]", "the", "trophy") and p.result.shape == (6, 12, 17, 17)


def test_find_jumps_to_the_articles_head(panel):
    finder = panel.page.finder
    assert (finder.from_combo.currentText(), finder.to_combo.currentText()) == ("it", "trophy")
    panel.find()
    assert (panel.page.layer_spin.value(), panel.page.head_spin.value()) == (4, 2)
    assert "the best head is layer 4, head 2, weight 0.58" in panel.page.finder.label.text()
    assert panel.page.finder.ranking_list.item(1).text() == "layer 5, head 4: 0.41"
    np.testing.assert_array_equal(panel.page.heatmap.values, panel.raw.attentions[3, 1])
    assert panel.page.heatmap.values[11, 2] == pytest.approx(0.58, abs=0.005)
    assert panel.page.tabs.currentWidget() is panel.page.heatmap and panel.page.lines.visible == {1}
    assert panel.page.heatmap.describe(11, 2).startswith("[it → trophy] = 0.58")
    panel.page.finder.ranking_list.setCurrentRow(1)
    assert (panel.page.layer_spin.value(), panel.page.head_spin.value()) == (5, 4)


def test_views_draw_exactly_the_weights_of_core(panel):
    """Each tab is drawn when shown (a hidden one waits), with core's weights."""
    page = panel.page
    page.tabs.setCurrentWidget(page.heatmap)
    panel.select_head(0, 2)
    assert page.undrawn_tabs == {page.lines, page.grid}
    page.tabs.setCurrentWidget(page.lines)
    page.tabs.setCurrentWidget(page.grid)
    assert page.undrawn_tabs == set()
    a = panel.raw.attentions
    lines = panel.page.lines.drawn(2)
    expected = {
        (i, j): min(int(a[0, 2, i, j] * LEVELS), LEVELS - 1)
        for i, j in zip(*np.nonzero(a[0, 2] >= MIN_WEIGHT), strict=True)
    }
    assert lines == expected and (2, 1) in lines  # layer 1, head 3 looks one step back
    np.testing.assert_array_equal(panel.page.grid.image.image, head_tiles(a).mosaic())
    assert panel.page.heatmap.levels == (0.0, 1.0) and panel.page.heatmap.row_labels == list(panel.raw.labels)


def test_hovering_a_token_keeps_only_its_lines(panel):
    panel.page.tabs.setCurrentWidget(panel.page.lines)
    panel.select_head(3, 1)
    panel.page.lines.set_visible_heads({1})
    panel.page.lines.set_focus("left", 11)
    assert {i for i, _ in panel.page.lines.drawn(1)} == {11}
    panel.page.lines.set_focus("right", 2)
    assert {j for _, j in panel.page.lines.drawn(1)} == {2}
    panel.page.lines.set_focus(None)
    assert len({i for i, _ in panel.page.lines.drawn(1)}) == 17


def test_chips_toggle_heads(panel):
    panel.page.tabs.setCurrentWidget(panel.page.lines)
    panel.page.lines.chips[4].click()
    assert 4 not in panel.page.lines.visible and panel.page.lines.drawn(4) == {}
    panel.page.lines.chips[4].click()
    assert 4 in panel.page.lines.visible and panel.page.lines.drawn(4)


def test_typing_runs_again_and_the_newest_text_wins(panel):
    for text in ("a", "a cat", "a cat sat on the mat"):
        panel.text_edit.setText(text)
    idle()
    assert panel.result.labels == ("[CLS]", "a", "cat", "sat", "on", "the", "mat", "[SEP]")
    assert panel.page.heatmap.values.shape == (8, 8)


def test_patterns_find_and_show_their_heads(panel):
    assert panel.page.patterns.buttons["previous"].text().endswith("layer 1, head 3: 1.00")
    panel.page.patterns.buttons["previous"].click()
    assert (panel.page.layer_spin.value(), panel.page.head_spin.value()) == (1, 3)
    assert panel.page.tabs.currentWidget() is panel.page.lines
    best = find_pattern(panel.result, "same_word").best
    assert panel.page.patterns.buttons["same_word"].text().endswith(str(best))


def test_the_runners_up_follow_the_text_and_options_shown(panel):
    label = panel.page.patterns.label
    assert label.text() == HINT  # nothing clicked yet

    def described(key):
        ranking = find_pattern(panel.result, key)
        return f"{ranking.what}: {ranking.best}. Next: {', '.join(map(str, ranking.ranked(4)[1:]))}."

    panel.page.patterns.buttons["same_word"].click()
    assert label.text() == described("same_word")
    settle(panel.text_edit.setText, "the cat saw the dog and the bird")
    assert label.text() == described("same_word")  # the ranking of the text shown, not the earlier one
    settle(panel.page.words_box.setChecked, True)
    assert label.text() == described("same_word")
    settle(panel.text_edit.setText, "a cat sat")  # no word repeats: the pattern does not apply
    assert label.text() == HINT
    panel.page.patterns.buttons["previous"].click()
    settle(panel.text_edit.setText, TROPHY)
    assert label.text() == described("previous")


def test_words_hiding_and_pair_filter_reexpress_the_result(panel):
    settle(panel.text_edit.setText, "unbelievably good")
    settle(panel.text_b_edit.setText, "yes")
    settle(panel.page.words_box.setChecked, True)
    words = to_words(panel.raw)
    assert panel.page.heatmap.row_labels == ["[CLS]", "unbelievably", "good", "[SEP]", "yes", "[SEP]"]
    np.testing.assert_allclose(panel.page.heatmap.values, words.attentions[0, 0], rtol=1e-6)
    settle(panel.page.special_box.setChecked, True)
    assert panel.page.rescale_box.isEnabled()
    hidden = drop_special(words)
    np.testing.assert_allclose(panel.page.heatmap.values, hidden.attentions[0, 0], rtol=1e-6)
    assert "share of what is left" in panel.page.heatmap.describe(0, 0)
    assert panel.page.part_combo.isEnabled()
    settle(panel.page.part_combo.setCurrentText, "A→B")
    a_to_b = only_part(hidden, "A→B").attentions[0, 0]
    np.testing.assert_allclose(panel.page.heatmap.values, a_to_b, rtol=1e-6)
    assert "outside the A→B filter" in panel.page.heatmap.describe(2, 0)
    settle(panel.text_b_edit.setText, "")
    assert not panel.page.part_combo.isEnabled() and panel.options.part == "all"


def test_options_run_in_the_background_the_old_view_stays_and_the_newest_lands(panel):
    p = panel.page
    settle(panel.text_b_edit.setText, "yes")
    before, labels = p.heatmap.values.copy(), list(p.heatmap.row_labels)
    p.words_box.setChecked(True)
    p.part_combo.setCurrentText("B→A")
    p.special_box.setChecked(True)
    p.special_box.setChecked(False)
    p.special_box.setChecked(True)
    assert panel.view.task is not None and not panel.options.words  # still computing in the worker
    np.testing.assert_array_equal(p.heatmap.values, before)  # the previous view stays meanwhile
    assert p.heatmap.row_labels == labels and p.words_box.isChecked()  # the controls show the new
    idle()
    o = panel.options
    assert (o.words, o.hide_special, o.part) == (True, True, "B→A")
    expected = only_part(drop_special(to_words(panel.raw)), "B→A").attentions[p.layer, p.head]
    np.testing.assert_allclose(p.heatmap.values, expected, rtol=1e-6)
    assert (p.words_box.isChecked(), p.special_box.isChecked(), p.part_combo.currentText()) == (
        True,
        True,
        "B→A",
    )


def test_a_decoder_is_loaded_once_for_every_panel(panel, tmp_path):
    from app.panels.inside_decoder import state as inside
    from core import models
    from tests.tiny_models import save_tiny_llama

    llama = str(save_tiny_llama(tmp_path / "llama"))
    settle(panel.load, llama)
    assert panel.model.source == llama and panel.model.kind == models.DECODER
    assert inside.decoder(llama) is panel.model
    assert shared.get(llama, expect=models.DECODER) is panel.model


def test_clicking_a_tile_opens_it_large(panel):
    panel.page.grid.clicked.emit(5, 11)
    assert panel.page.tabs.currentWidget() is panel.page.heatmap
    assert (panel.page.layer_spin.value(), panel.page.head_spin.value()) == (6, 12)
    np.testing.assert_array_equal(panel.page.heatmap.values, panel.raw.attentions[5, 11])


def test_steps_switch_views_and_the_searches_wait_for_their_buttons(panel):
    panel.set_step(3)  # its first showing opens on the best head (below), once
    panel.set_step(2)
    assert panel.page.tabs.currentWidget() is panel.page.grid
    panel.select_head(0, 0)
    shown = (panel.page.layer_spin.value(), panel.page.head_spin.value())
    panel.set_step(3)
    assert panel.page.tabs.currentWidget() is panel.page.heatmap
    assert (panel.page.layer_spin.value(), panel.page.head_spin.value()) == shown
    panel.set_step(4)
    assert panel.page.tabs.currentWidget() is panel.page.lines
    assert (panel.page.layer_spin.value(), panel.page.head_spin.value()) == shown  # paging changed nothing
    panel.page.finder.button.click()
    assert panel.page.layer_spin.value() == 4
    panel.page.patterns.buttons["previous"].click()
    assert panel.page.tabs.currentWidget() is panel.page.lines and panel.page.head_spin.value() == 3


@pytest.mark.parametrize("text", ["", "   "])
def test_empty_text_keeps_the_previous_result(panel, text):
    before = panel.page.heatmap.values.copy()
    settle(panel.text_edit.setText, text)
    assert "Type some text" in panel.message.text() and panel.message.level == "error"
    np.testing.assert_array_equal(panel.page.heatmap.values, before)


def test_long_text_is_cut_with_a_visible_notice(panel):
    settle(panel.text_edit.setText, "word " * 2000)
    assert panel.result.shape[-1] == 512 and panel.message.level == "warning"
    assert "cut to 512 tokens" in panel.message.text() and "1490" in panel.message.text()
    grid = panel.page.grid
    panel.page.tabs.setCurrentWidget(grid)
    assert grid.reduced and grid.shape == (6, 12, 64, 64)
    np.testing.assert_array_equal(grid.image.image, head_tiles(panel.result.attentions).mosaic())


def test_unusual_scripts_stay_finite(panel):
    settle(panel.text_edit.setText, "👍 日本語 שלום مرحبا")
    assert not panel.message.isVisibleTo(panel)
    assert np.isfinite(panel.page.heatmap.values).all() and "日" in panel.result.labels


def test_bad_folders_are_refused_and_the_model_stays(panel, tmp_path):
    settle(panel.load, str(tmp_path))
    assert "no config.json" in panel.message.text() and panel.model.name == "all-MiniLM-L6-v2"
    pickled = tmp_path / "pickled"
    pickled.mkdir()
    (pickled / "config.json").write_text("{}")
    (pickled / "pytorch_model.bin").write_bytes(b"x")
    settle(panel.load, str(pickled))
    assert "only pickled weights" in panel.message.text()
    assert panel.loader.combo.currentData() == "minilm"
    settle(panel.text_edit.setText, "still working")
    assert panel.result.labels[1:3] == ("still", "working")


def test_a_local_decoder_loads_shows_causal_weights_and_is_remembered(panel, gpt2_folder):
    settle(panel.load, str(gpt2_folder))
    assert panel.model.is_causal and "decoder" in panel.loader.info.text()
    assert panel.page.layer_spin.maximum() == 2 and panel.page.head_spin.maximum() == 3
    assert not np.triu(panel.page.heatmap.values, k=1).any()
    assert not panel.page.patterns.buttons["special"].isEnabled()
    settle(panel.text_b_edit.setText, "a second one")
    assert "no separator token" in panel.message.text()
    assert panel.loader.combo.findData(str(gpt2_folder)) > 0
    settle(panel.text_b_edit.setText, "")
    settle(panel.load, "minilm")  # from memory: instant
    assert panel.model.name == "all-MiniLM-L6-v2" and panel.result.shape[:2] == (6, 12)


def test_cancel_keeps_the_previous_model(panel, gpt2_folder):
    shared.forget(str(gpt2_folder))
    before = panel.model
    panel.load(str(gpt2_folder))
    panel.loader.cancel_button.click()
    idle()
    assert panel.model is before and "cancelled" in panel.message.text()
    assert not panel.loader.progress.isVisibleTo(panel)


def test_missing_libraries_name_the_extra(panel, gpt2_folder, monkeypatch):
    shared.forget(str(gpt2_folder))
    monkeypatch.setitem(sys.modules, "transformers", None)
    settle(panel.load, str(gpt2_folder))
    assert "attention-lab[models]" in panel.message.text()


def test_a_vanished_last_folder_falls_back_to_the_bundled_model(qtbot, tmp_path):
    from app.settings import settings

    broken = tmp_path / "was-a-model"
    broken.mkdir()
    settings().setValue("model/last", str(broken))
    p = ModelPanel()
    qtbot.addWidget(p)
    p.show()
    idle()
    assert p.model.name == "all-MiniLM-L6-v2" and p.result is not None
    assert p.message.level == "warning" and "no config.json" in p.message.text()
    assert "bundled model instead" in p.message.text()


def test_find_a_head_opens_on_the_head_its_lesson_describes(panel):
    """Step 4 first shows the default pair's best head and its ranking, before any button."""
    assert panel.page.finder.ranking_list.count() == 10  # ranked as the weights came
    panel.set_step(3)
    page = panel.page
    assert (page.layer_spin.value(), page.head_spin.value()) == (4, 2)
    assert "it → trophy: the best head is layer 4, head 2, weight 0.58" in page.finder.label.text()
    assert page.finder.ranking_list.item(0).text() == "layer 4, head 2: 0.58"
    assert page.tabs.currentWidget() is page.heatmap
    np.testing.assert_array_equal(page.heatmap.values, panel.raw.attentions[3, 1])


def test_find_a_head_shown_before_the_weights_opens_on_its_head_when_they_come(qtbot):
    p = ModelPanel()
    qtbot.addWidget(p)
    p.set_step(3)  # before the first show: no model, no weights yet
    assert p.result is None and p.page.finder.ranking is None
    p.show()
    idle()
    assert (p.page.layer_spin.value(), p.page.head_spin.value()) == (4, 2)
    p.set_step(4)
    p.set_step(3)
    assert (p.page.layer_spin.value(), p.page.head_spin.value()) == (4, 2)


def test_the_head_on_screen_opens_inside_a_head(panel, qtbot):
    panel.select_head(3, 1)  # layer 4, head 2: the article's "it" → "trophy" head
    with qtbot.waitSignal(panel.openHead, timeout=patience_ms(5)) as asked:
        panel.page.inside_button.click()
    raw = panel.raw
    key = int(raw.attentions[3, 1, -1].argmax()) + 1
    assert asked.args[0] == {
        "source": "minilm",
        "prompt": panel.run.state.text,
        "layer": 4,
        "head": 2,
        "query": 0,
        "key": key,
    }
