import numpy as np
import pytest

from app.panels import PANELS, PanelEntry
from app.panels.base import Panel
from app.panels.multihead.state import MAX_HEADS
from core.maths.masks import causal
from core.maths.multihead import head_divisors, head_table, multi_head, random_weights
from tests.app.conftest import idle
from tests.waits import patience_ms

ARTICLE_TOKENS = ["the", "trophy", "would", "not", "fit", "into", "my", "suitcase"]


def core_trace(tokens, d_model, heads, seed=42, scale=0.1, **kwargs):
    model = random_weights(np.random.default_rng(seed), tokens, d_model)
    return multi_head(model.X, *model.split(heads, scale), **kwargs)


def table_texts(panel):
    panel.set_step(1)  # the table is drawn when its step is shown
    t = panel.table_page.table
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
        np.testing.assert_allclose(panel.side_by_side.grid_maps[i].values, trace.heads[i].weights)


def test_every_head_shares_one_colour_scale(panel):
    top = panel.trace.weights.max()
    levels = {m.levels for m in panel.side_by_side.grid_maps[:4]} | {panel.side_by_side.detail_map.levels}
    assert levels == {(0.0, top)}
    assert panel.side_by_side.detail_map.colorbar is not None
    assert all(m.colorbar is None for m in panel.side_by_side.grid_maps)
    panel.temperature_slider.setValue(0.2)
    sharper = panel.trace.weights.max()
    assert sharper > top
    assert {m.levels for m in panel.side_by_side.grid_maps[:4]} == {(0.0, sharper)}


def test_heads_control_offers_divisors_and_changes_the_grid(panel):
    offered = [panel.heads_box.itemText(k) for k in range(panel.heads_box.count())]
    assert offered == ["1", "2", "4", "8", "16"] == [str(h) for h in head_divisors(32, MAX_HEADS)]
    panel.choose_heads(8)
    trace = core_trace(ARTICLE_TOKENS, 32, 8)
    assert sum(m.isVisibleTo(panel) for m in panel.side_by_side.grid_maps) == 8
    for i in range(8):
        np.testing.assert_allclose(panel.side_by_side.grid_maps[i].values, trace.heads[i].weights)
    assert panel.d_k_label.text().endswith("= 4")
    assert len(table_texts(panel)) == 8
    panel.choose_heads(2)
    panel.set_step(0)
    assert sum(m.isVisibleTo(panel) for m in panel.side_by_side.grid_maps) == 2


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
    before = panel.side_by_side.grid_maps[0].values.copy()
    type_heads(panel, typed)
    assert message in panel.message.text() and panel.message.level == "error"
    assert panel.settings.heads == 4
    np.testing.assert_array_equal(panel.side_by_side.grid_maps[0].values, before)
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
    assert len(table_texts(panel)) == 1
    panel.set_step(2)
    assert np.all(np.isfinite(panel.join.output_map.values)) and panel.join.output_map.values.shape == (8, 1)


def test_one_head(panel):
    panel.choose_heads(1)
    trace = core_trace(ARTICLE_TOKENS, 32, 1)
    np.testing.assert_allclose(panel.side_by_side.grid_maps[0].values, trace.heads[0].weights)
    assert table_texts(panel)[0][3] == f"{head_table(trace).agreement_head0[0]:.4f}"
    panel.set_step(2)
    assert sum(b.isVisible() for b in panel.join.concat_blocks) == 1


def test_clicking_a_head_enlarges_it_with_its_queries_and_keys(panel):
    panel.side_by_side.grid_maps[2].clicked.emit(0, 0)
    assert panel.side_by_side.selected == 2
    np.testing.assert_allclose(panel.side_by_side.detail_map.values, panel.trace.heads[2].weights)
    np.testing.assert_allclose(panel.side_by_side.q_map.values, panel.trace.queries[2])
    np.testing.assert_allclose(panel.side_by_side.k_map.values, panel.trace.keys[2])
    assert panel.side_by_side.q_map.values.shape == (8, 8)
    assert "<b>head 2</b>" in panel.side_by_side.grid_maps[2].plot.titleLabel.text
    assert panel.side_by_side.detail_map.describe(1, 3).startswith("[trophy → not] = ")
    panel.choose_heads(2)
    assert panel.side_by_side.selected == 1  # the enlarged head stays within the new head count


def test_mask_applies_to_every_head_and_the_table(panel):
    panel.mask_box.setCurrentText("causal")
    for m in panel.side_by_side.grid_maps[:4]:
        np.testing.assert_array_equal(m.values[~causal(8)], 0.0)
    assert table_texts(panel)[0][4] == f"{np.mean(1 / np.arange(1, 9)):.4f}"


def test_join_shows_the_actual_matrices_and_head_blocks(panel):
    panel.set_step(2)
    trace = core_trace(ARTICLE_TOKENS, 32, 4)
    np.testing.assert_allclose(panel.join.concat_map.values, trace.concat)
    np.testing.assert_allclose(panel.join.output_map.values, trace.output)
    join = panel.join
    np.testing.assert_allclose(join.output_map.values, join.concat_map.values @ join.w_o_map.values)
    rects = [(b.rect().x(), b.rect().width()) for b in panel.join.concat_blocks if b.isVisible()]
    assert rects == [(0, 8), (8, 8), (16, 8), (24, 8)]
    rows = [(b.rect().y(), b.rect().height()) for b in panel.join.w_o_blocks if b.isVisible()]
    assert rows == [(0, 8), (8, 8), (16, 8), (24, 8)]
    assert "concat 8 × 32" in panel.join.shapes_label.text()
    assert panel.join.concat_map.describe(0, 9).endswith("output of head 1, feature 1, for “the”")
    # 1 head of width 32 and 4 of width 8 do the same matrix work at n = 8.
    total = 8 * 8 * 32**2 + 4 * 8**2 * 32
    assert panel.join.cost_note.text().count(f"{total:,}") == 2
    panel.choose_heads(8)
    assert sum(b.isVisible() for b in panel.join.concat_blocks) == 8
    assert panel.join.concat_blocks[7].rect().x() == 28


def test_real_model_button_asks_for_the_model_panel(panel, qtbot):
    with qtbot.waitSignal(panel.openPanel, timeout=patience_ms(5)) as blocker:
        panel.model_button.click()
    assert blocker.args == ["model"]


@pytest.mark.parametrize(
    ("text", "message"), [("", "at least one token"), (" ".join(["x"] * 129), "at most 128 tokens")]
)
def test_bad_tokens_keep_the_previous_state(panel, text, message):
    before = panel.side_by_side.grid_maps[0].values.copy()
    panel.tokens_edit.setText(text)
    assert message in panel.message.text()
    np.testing.assert_array_equal(panel.side_by_side.grid_maps[0].values, before)


def test_tokens_and_repeats(panel):
    panel.tokens_edit.setText("a b a")
    assert panel.side_by_side.grid_maps[0].row_labels == ["a", "b", "a"]
    q = panel.side_by_side.q_map.values  # a repeated token repeats its row (up to the product's rounding)
    np.testing.assert_allclose(q[0], q[2], rtol=0, atol=1e-12)


def test_steps_switch_pages_and_reset_restores_the_article(panel):
    for step in range(4):
        panel.set_step(step)
        assert panel.pages.currentIndex() == step
    assert "real-model panel" in panel.learned.caption.text()
    np.testing.assert_allclose(panel.learned.grid_maps[0].values, panel.side_by_side.grid_maps[0].values)
    panel.seed_spin.setValue(1)
    panel.scale_slider.setValue(1.0)
    panel.reset()
    assert table_texts(panel)[1][1] == "2.375"
    assert panel.seed_spin.value() == 42 and panel.scale_slider.value() == pytest.approx(0.1)


def test_exercise_ends_on_finite_values(panel):
    panel.exercise()
    assert panel.settings == type(panel.settings)()
    heads, join = panel.side_by_side, panel.join
    for m in (*heads.grid_maps, heads.detail_map, join.concat_map, join.output_map):
        assert np.all(np.isfinite(m.values))


class ModelStandIn(Panel):
    pass


def test_real_model_button_opens_that_panel_in_the_window(qtbot, monkeypatch):
    from app.window import MainWindow

    panels = [
        next(entry for entry in PANELS if entry.key == "multihead"),
        PanelEntry("model", "Real model", f"{__name__}:ModelStandIn"),
    ]
    monkeypatch.setattr("app.panels.PANELS", panels)  # where the stand-in finds its key and title
    window = MainWindow(panels=panels)
    qtbot.addWidget(window)
    window.show_panel("multihead").model_button.click()
    assert isinstance(window.current(), ModelStandIn)


@pytest.mark.parametrize("heads", [4, 8, 16])
def test_head_maps_get_the_height_their_square_cells_need(panel, qapp, heads):
    panel.live.apply(heads=heads)
    for _ in range(3):
        qapp.processEvents()
    page = panel.side_by_side
    row, share = page.grid_box, page.height() / 3
    assert row.columns * row.rows >= heads
    assert row.height() <= share + 1
    for heatmap in page.grid_maps[:heads]:  # as tall as wide, unless the row has its whole share
        box = heatmap.plot.vb.size()
        assert box.height() >= 0.9 * box.width() or row.height() >= share - 1, box
        assert heatmap.plot.vb.state["aspectLocked"] == 1  # the cells are square in any case


def test_a_pasted_word_of_thousands_of_characters_does_not_widen_the_panel(panel):
    from PySide6.QtWidgets import QApplication

    from app.widgets.plots import TICK_CHARS

    panel.tokens_edit.setText(f"the {'x' * 3000} cat")
    idle()
    for _ in range(3):  # painted: an axis widens itself for the labels it draws
        panel.grab()
        QApplication.processEvents()
    assert panel.minimumSizeHint().width() < 60 * TICK_CHARS  # the word shows cut in its tick labels


def test_exported_table_script_rebuilds_the_heads_and_mask(panel, tmp_path):
    """8 heads under a causal mask at T = 0.5: the table step's script prints every number of
    the table, to the digits shown."""
    from tests.app.test_export_scripts import printed_numbers, run_scripts, text_numbers, untold

    panel.choose_heads(8)
    panel.mask_box.setCurrentText("causal")
    panel.temperature_slider.setValue(0.5)
    path = tmp_path / "table.py"
    path.write_text(panel.script(1), encoding="utf-8")
    (run,) = run_scripts([path])
    assert run.returncode == 0, run.stderr
    panel.set_step(1)
    assert not untold(text_numbers(panel), printed_numbers(run.stdout))
    table = head_table(core_trace(ARTICLE_TOKENS, 32, 8, mask=causal(8), temperature=0.5))
    assert f"{table.mean_entropy[7]:.6g}" in run.stdout
