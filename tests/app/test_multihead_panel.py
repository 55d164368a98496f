import numpy as np
import pytest

from app.panels import PANELS, PanelEntry
from app.panels.base import Panel
from app.panels.multihead import head_divisors
from core.masks import causal
from core.multihead import head_table, multi_head, random_weights

ARTICLE_TOKENS = ["the", "trophy", "would", "not", "fit", "into", "my", "suitcase"]


def core_trace(tokens, d_model, heads, seed=42, scale=0.1, **kwargs):
    model = random_weights(np.random.default_rng(seed), tokens, d_model)
    return multi_head(model.X, *model.split(heads, scale), **kwargs)


def table_texts(panel):
    t = panel.table
    return [[t.item(i, j).text() for j in range(t.columnCount())] for i in range(t.rowCount())]


def type_heads(panel, text):
    panel.heads_box.setEditText(text)
    panel.heads_box.lineEdit().editingFinished.emit()


def test_default_is_the_articles_example_and_its_table(panel):
    rows = table_texts(panel)
    assert [r[1] for r in rows] == ["5.250", "2.375", "2.750", "4.125"]
    assert [r[2] for r in rows] == ["2.0457", "2.0454", "2.0490", "2.0378"]
    assert [r[3] for r in rows] == ["0.1331", "0.1265", "0.1264", "0.1254"]
    assert [r[4] for r in rows] == ["0.1250"] * 4
    trace = core_trace(ARTICLE_TOKENS, 32, 4)
    for i in range(4):
        np.testing.assert_allclose(panel.grid_maps[i].values, trace.heads[i].weights)


def test_every_head_shares_one_colour_scale(panel):
    top = panel.trace.weights.max()
    levels = {m.levels for m in panel.grid_maps[:4]} | {panel.detail_map.levels}
    assert levels == {(0.0, top)}
    assert panel.detail_map.colorbar is not None
    assert all(m.colorbar is None for m in panel.grid_maps)
    panel.temperature_slider.setValue(0.2)
    sharper = panel.trace.weights.max()
    assert sharper > top
    assert {m.levels for m in panel.grid_maps[:4]} == {(0.0, sharper)}


def test_heads_control_offers_divisors_and_changes_the_grid(panel):
    offered = [panel.heads_box.itemText(k) for k in range(panel.heads_box.count())]
    assert offered == ["1", "2", "4", "8", "16"] == [str(h) for h in head_divisors(32)]
    panel.choose_heads(8)
    trace = core_trace(ARTICLE_TOKENS, 32, 8)
    assert sum(m.isVisibleTo(panel) for m in panel.grid_maps) == 8
    for i in range(8):
        np.testing.assert_allclose(panel.grid_maps[i].values, trace.heads[i].weights)
    assert panel.d_k_label.text().endswith("= 4")
    assert panel.table.rowCount() == 8
    panel.choose_heads(2)
    assert sum(m.isVisibleTo(panel) for m in panel.grid_maps) == 2


@pytest.mark.parametrize(
    ("typed", "message"),
    [
        ("5", "do not divide d_model = 32; choose one of 1, 2, 4, 8, 16"),
        ("two", "Heads must be a whole number from 1 to 16"),
        ("99999999999999999999", "from 1 to 16"),
        ("٣٣", "from 1 to 16"),
    ],
)
def test_a_typed_head_count_is_checked(panel, typed, message):
    before = panel.grid_maps[0].values.copy()
    type_heads(panel, typed)
    assert message in panel.message.text() and panel.message.level == "error"
    assert panel.settings.heads == 4
    np.testing.assert_array_equal(panel.grid_maps[0].values, before)
    type_heads(panel, "2")
    assert panel.settings.heads == 2 and not panel.message.isVisibleTo(panel)


def test_too_many_heads_for_the_screen(panel):
    panel.d_model_spin.setValue(64)
    type_heads(panel, "32")
    assert "Heads must be a whole number from 1 to 16" in panel.message.text()
    assert "32" not in [panel.heads_box.itemText(k) for k in range(panel.heads_box.count())]


def test_d_model_change_keeps_a_dividing_head_count(panel):
    panel.d_model_spin.setValue(30)
    assert panel.settings.heads == 3 and panel.message.level == "info"
    assert "4 heads do not divide d_model = 30" in panel.message.text()
    assert [panel.heads_box.itemText(k) for k in range(panel.heads_box.count())] == [
        str(h) for h in (1, 2, 3, 5, 6, 10, 15)
    ]
    panel.d_model_spin.setValue(1)
    assert panel.settings.heads == 1
    assert panel.table.rowCount() == 1
    assert np.all(np.isfinite(panel.output_map.values)) and panel.output_map.values.shape == (8, 1)


def test_one_head(panel):
    panel.choose_heads(1)
    trace = core_trace(ARTICLE_TOKENS, 32, 1)
    np.testing.assert_allclose(panel.grid_maps[0].values, trace.heads[0].weights)
    assert table_texts(panel)[0][3] == f"{head_table(trace).agreement_head0[0]:.4f}"
    assert sum(b.isVisible() for b in panel.concat_blocks) == 1


def test_clicking_a_head_enlarges_it_with_its_queries_and_keys(panel):
    panel.grid_maps[2].clicked.emit(0, 0)
    assert panel.selected == 2
    np.testing.assert_allclose(panel.detail_map.values, panel.trace.heads[2].weights)
    np.testing.assert_allclose(panel.q_map.values, panel.trace.queries[2])
    np.testing.assert_allclose(panel.k_map.values, panel.trace.keys[2])
    assert panel.q_map.values.shape == (8, 8)
    assert "<b>head 2</b>" in panel.grid_maps[2].plot.titleLabel.text
    assert panel.detail_map.describe(1, 3).startswith("[trophy → not] = ")
    panel.choose_heads(2)
    assert panel.selected == 1  # the enlarged head stays within the new head count


def test_mask_applies_to_every_head_and_the_table(panel):
    panel.mask_box.setCurrentText("causal")
    for m in panel.grid_maps[:4]:
        np.testing.assert_array_equal(m.values[~causal(8)], 0.0)
    assert table_texts(panel)[0][4] == f"{np.mean(1 / np.arange(1, 9)):.4f}"


def test_join_shows_the_actual_matrices_and_head_blocks(panel):
    trace = core_trace(ARTICLE_TOKENS, 32, 4)
    np.testing.assert_allclose(panel.concat_map.values, trace.concat)
    np.testing.assert_allclose(panel.output_map.values, trace.output)
    np.testing.assert_allclose(panel.output_map.values, panel.concat_map.values @ panel.w_o_map.values)
    rects = [(b.rect().x(), b.rect().width()) for b in panel.concat_blocks if b.isVisible()]
    assert rects == [(0, 8), (8, 8), (16, 8), (24, 8)]
    rows = [(b.rect().y(), b.rect().height()) for b in panel.w_o_blocks if b.isVisible()]
    assert rows == [(0, 8), (8, 8), (16, 8), (24, 8)]
    assert "concat 8 × 32" in panel.shapes_label.text()
    assert panel.concat_map.describe(0, 9).endswith("output of head 1, feature 1, for “the”")
    # 1 head of width 32 and 4 of width 8 do the same matrix work at n = 8.
    total = 8 * 8 * 32**2 + 4 * 8**2 * 32
    assert panel.cost_note.text().count(f"{total:,}") == 2
    panel.choose_heads(8)
    assert sum(b.isVisible() for b in panel.concat_blocks) == 8
    assert panel.concat_blocks[7].rect().x() == 28


def test_real_model_button_asks_for_the_model_panel(panel, qtbot):
    with qtbot.waitSignal(panel.openPanel) as blocker:
        panel.model_button.click()
    assert blocker.args == ["model"]


@pytest.mark.parametrize(
    ("text", "message"), [("", "at least one token"), (" ".join(["x"] * 129), "at most 128 tokens")]
)
def test_bad_tokens_keep_the_previous_state(panel, text, message):
    before = panel.grid_maps[0].values.copy()
    panel.tokens_edit.setText(text)
    assert message in panel.message.text()
    np.testing.assert_array_equal(panel.grid_maps[0].values, before)


def test_tokens_and_repeats(panel):
    panel.tokens_edit.setText("a b a")
    assert panel.grid_maps[0].row_labels == ["a", "b", "a"]
    np.testing.assert_array_equal(panel.q_map.values[0], panel.q_map.values[2])


def test_steps_switch_pages_and_reset_restores_the_article(panel):
    for step, page in enumerate((0, 1, 2, 0)):
        panel.set_step(step)
        assert panel.pages.currentIndex() == page
    assert "real-model panel" in panel.caption.text()
    panel.seed_spin.setValue(1)
    panel.scale_slider.setValue(1.0)
    panel.reset()
    assert table_texts(panel)[1][1] == "2.375"
    assert panel.seed_spin.value() == 42 and panel.scale_slider.value() == pytest.approx(0.1)


def test_exercise_ends_on_finite_values(panel):
    panel.exercise()
    assert panel.settings == type(panel.settings)()
    for m in (*panel.grid_maps, panel.detail_map, panel.concat_map, panel.output_map):
        assert np.all(np.isfinite(m.values))


class ModelStandIn(Panel):
    key, title = "model", "Real model"


def test_real_model_button_opens_that_panel_in_the_window(qtbot):
    from app.window import MainWindow

    panels = [
        next(entry for entry in PANELS if entry.key == "multihead"),
        PanelEntry("model", "Real model", f"{__name__}:ModelStandIn"),
    ]
    window = MainWindow(panels=panels)
    qtbot.addWidget(window)
    window.show_panel("multihead").model_button.click()
    assert isinstance(window.current(), ModelStandIn)
