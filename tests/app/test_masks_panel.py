import numpy as np

from core.maths import masks
from core.maths.attention import attend
from core.maths.qkv import random_example

DEFAULT = ["the", "cat", "sat", "on", "the", "mat", "[PAD]", "[PAD]"]


def qkv(tokens, seed=0):
    return random_example(tokens, 8, 4, seed).projections()


def table_column(table, j):
    return [table.item(i, j).text() for i in range(table.rowCount())]


def all_shown_values(p):
    """Every heatmap's values, visiting each step so that its views are up to date."""
    step, values = p.step, []
    pages = (
        [p.kinds.mask_map, p.kinds.score_map, p.kinds.weight_map],
        p.additive.add_maps,
        [p.cross.cross_map],
        [p.copying.copy_map],
    )
    for i, maps in enumerate(pages):
        p.set_step(i)
        values += [m.values.copy() for m in maps]
    p.set_step(step)
    return values


def test_default_view_is_causal_and_padding_computed_by_core(panel):
    mask = masks.combine(masks.causal(8), masks.padding([True] * 6 + [False] * 2))
    trace = attend(*qkv(DEFAULT), mask=mask)
    np.testing.assert_array_equal(panel.kinds.mask_map.values, mask.astype(float))
    np.testing.assert_array_equal(panel.kinds.score_map.values, trace.masked)
    np.testing.assert_array_equal(panel.kinds.weight_map.values, trace.weights)
    assert panel.kinds.score_map.values[0, 1] == -np.inf and panel.kinds.weight_map.values[0, 1] == 0.0
    top = np.abs(trace.scaled).max()  # hidden scores count too: colours stay put as the mask changes
    assert panel.kinds.score_map.levels == (-top, top)
    assert "33 of 64 = 8² (51.6 %)" in panel.kinds.cost_note.text()
    assert "saves 48.4 %" in panel.kinds.cost_note.text()
    assert "exactly 0 in every row" in panel.kinds.cost_note.text()
    assert table_column(panel.kinds.row_table, 0) == [f"{k} of 8" for k in (1, 2, 3, 4, 5, 6, 6, 6)]
    assert table_column(panel.kinds.row_table, 1) == ["0 (exact)"] * 8
    assert panel.kinds.mask_map.col_labels == DEFAULT and "Padding hides" in panel.family_note.text()
    assert not panel.message.isVisibleTo(panel)


def test_every_kind_shows_the_core_mask_and_its_weights(panel):
    panel.pad_spin.setValue(0)
    panel.window_slider.setValue(2)
    expected = masks.causal(8)
    for kind in masks.KINDS:  # "custom" comes last and starts from the mask shown before it
        panel.kind_combo.setCurrentIndex(masks.KINDS.index(kind))
        expected = masks.build(masks.MaskSpec(kind, window=2, custom=expected), 8)
        np.testing.assert_array_equal(panel.kinds.mask_map.values, expected.astype(float))
        trace = attend(*qkv(DEFAULT), mask=expected)
        np.testing.assert_array_equal(panel.kinds.weight_map.values, trace.weights)
        assert f"{int(expected.sum())} of 64" in panel.kinds.cost_note.text()
        assert panel.window_slider.isEnabled() == (kind in ("sliding_window", "global_local"))


def test_window_and_symmetry_follow_the_controls(panel):
    panel.kind_combo.setCurrentIndex(masks.KINDS.index("sliding_window"))
    panel.window_slider.setValue(3)
    panel.symmetric_box.setChecked(True)
    valid = np.arange(8) < 6
    expected = masks.combine(masks.sliding_window(8, 3, causal=False), masks.padding(valid))
    np.testing.assert_array_equal(panel.kinds.mask_map.values, expected.astype(float))
    panel.kind_combo.setCurrentIndex(masks.KINDS.index("global_local"))
    panel.global_edit.setText("0, 5")
    expected = masks.combine(masks.global_local(8, 3, [0, 5]), masks.padding(valid))
    np.testing.assert_array_equal(panel.kinds.mask_map.values, expected.astype(float))


def test_clicking_the_mask_makes_it_custom_and_switches_the_cell(panel):
    panel.kinds.mask_map.clicked.emit(3, 1)  # causal allows it: now hidden
    assert panel.settings.kind == "custom" and panel.kind_combo.currentData() == "custom"
    assert panel.kinds.mask_map.values[3, 1] == 0.0 and panel.kinds.weight_map.values[3, 1] == 0.0
    panel.kinds.mask_map.clicked.emit(0, 4)  # the future: now allowed
    assert panel.kinds.mask_map.values[0, 4] == 1.0 and panel.kinds.weight_map.values[0, 4] > 0
    assert "switched off" in panel.kinds.mask_map.describe(3, 1)
    panel.tokens_edit.setText("the cat sat on the mat [PAD] [PAD] and more")  # the grid grows
    grid = np.array(panel.settings.custom)
    assert grid.shape == (10, 10) and not grid[3, 1] and grid[0, 4]
    np.testing.assert_array_equal(grid[8:, :], masks.causal(10)[8:, :])  # new rows start causal


def test_additive_masks_show_their_weights_and_leaks(panel):
    panel.set_step(1)
    trace = attend(*qkv(DEFAULT))
    mask = masks.build(masks.MaskSpec("causal", n_pad=2), 8)
    for heatmap, fill in zip(panel.additive.add_maps, (-np.inf, -1e9, -10.0), strict=True):
        outcome = masks.additive_outcome(trace.scaled, mask, fill)
        np.testing.assert_array_equal(heatmap.values, outcome.weights)
    assert table_column(panel.additive.add_table, 0) == ["0 (exact)"] * 8
    assert table_column(panel.additive.add_table, 1) == ["0 (exact)"] * 8
    small = masks.additive_outcome(trace.scaled, mask, -10.0).leak
    assert table_column(panel.additive.add_table, 2)[1] == f"{small[1]:.3g}" and small[1] > 0
    assert table_column(panel.additive.add_table, 2)[6:] == ["0.491", "0.491"]  # quoted in the lesson


def test_a_fully_masked_row_warns_and_shows_zeros_never_nan(panel):
    panel.set_step(1)
    panel.additive.empty_button.click()
    assert panel.message.isVisibleTo(panel) and panel.message.level == "warning"
    assert "“the” may attend to nothing" in panel.message.text()
    assert panel.additive.add_maps[0].values[0].tolist() == [0.0] * 8
    assert table_column(panel.additive.add_table, 1)[0] == "1"  # −1e9: the row reads every hidden key
    assert "−∞ − (−∞)" in panel.additive.empty_note.text() and "leak 1" in panel.additive.empty_note.text()
    for values in all_shown_values(panel):
        assert not np.isnan(values).any()
    panel.set_step(0)
    assert panel.kinds.weight_map.values[0].tolist() == [0.0] * 8
    assert table_column(panel.kinds.row_table, 0)[0] == "0 of 8"


def test_every_token_padding_is_a_warning_with_zero_weights(panel):
    panel.pad_spin.setValue(8)
    assert panel.message.level == "warning"
    assert panel.kinds.weight_map.values.sum() == 0.0 and np.all(np.isfinite(panel.kinds.weight_map.values))
    panel.set_step(3)
    assert "Needs two tokens" in panel.copying.copy_note.text()
    panel.pad_spin.setValue(0)
    assert not panel.message.isVisibleTo(panel)


BAD_INPUT = [
    (lambda p: p.tokens_edit.setText(""), "at least one token"),
    (lambda p: p.tokens_edit.setText(" ".join(["x"] * 65)), "at most 64 tokens"),
    (lambda p: p.pad_spin.setValue(9), "Padding must cover"),
    (lambda p: p.global_edit.setText("first"), "whole number from 0 to 63"),
    # monkey seeds 90210 and 4242: a huge position once overflowed numpy (OverflowError)
    (lambda p: p.global_edit.setText("99999999999999999999"), "whole number from 0 to 63"),
    (lambda p: p.cross.queries_edit.setText("  "), "at least one token"),
]


def test_bad_input_keeps_the_previous_state(panel):
    for action, message in BAD_INPUT:
        panel.reset()
        before = all_shown_values(panel)
        action(panel)
        assert message in panel.message.text() and panel.message.level == "error"
        for old, new in zip(before, all_shown_values(panel), strict=True):
            np.testing.assert_array_equal(old, new)


def test_window_larger_than_the_sentence_is_refused(panel):
    panel.tokens_edit.setText("a b c")
    panel.kind_combo.setCurrentIndex(masks.KINDS.index("sliding_window"))
    panel.window_slider.setValue(2)
    before = panel.kinds.mask_map.values.copy()
    panel.window_slider.setValue(5)
    assert "window must be 1 … 3" in panel.message.text()
    np.testing.assert_array_equal(panel.kinds.mask_map.values, before)


def test_cross_attention_is_rectangular_with_both_token_lists(panel):
    panel.set_step(2)
    panel.cross.queries_edit.setText("ich bin")
    panel.cross.keys_edit.setText("i am here now")
    q, kv = ["ich", "bin"], ["i", "am", "here", "now"]
    Q, K, V = random_example(q + kv, 8, 4, 0).projections()
    expected = attend(Q[:2], K[2:], V[2:]).weights
    assert panel.cross.cross_map.values.shape == (2, 4)
    np.testing.assert_array_equal(panel.cross.cross_map.values, expected)
    assert panel.cross.cross_map.row_labels == q and panel.cross.cross_map.col_labels == kv
    assert (
        "weights 2×4" in panel.cross.cross_note.text()
        and "Row sums: 1.00 1.00" in panel.cross.cross_note.text()
    )


def test_copying_the_answer_without_and_with_the_causal_mask(panel):
    panel.set_step(3)
    Q, K, V = (m[:6] for m in qkv(DEFAULT))  # the padding is not trained on
    weights = attend(Q, K, V).weights
    bars = panel.copying.copy_bars.opts["height"]
    np.testing.assert_array_equal(bars, [weights[i, i + 1] for i in range(5)])
    assert bars.max() > 0.5
    panel.copying.copy_box.setChecked(True)
    assert panel.copying.copy_bars.opts["height"].tolist() == [0.0] * 5
    assert "the answer is hidden" in panel.copying.copy_note.text()


def test_steps_and_reset(panel):
    for i in range(len(panel.steps)):
        panel.set_step(i)
        assert panel.pages.currentIndex() == i
    panel.tokens_edit.setText("x y z")
    panel.kind_combo.setCurrentIndex(0)
    panel.seed_spin.setValue(4)
    panel.reset()
    assert panel.tokens_edit.text() == " ".join(DEFAULT) and panel.kind_combo.currentData() == "causal"
    assert panel.seed_spin.value() == 0 and panel.pad_spin.value() == 2
    mask = masks.build(masks.MaskSpec("causal", n_pad=2), 8)
    np.testing.assert_array_equal(panel.kinds.weight_map.values, attend(*qkv(DEFAULT), mask=mask).weights)


def test_64_tokens_stay_finite(panel):
    panel.tokens_edit.setText(" ".join(f"w{i}" for i in range(64)))
    panel.kind_combo.setCurrentIndex(masks.KINDS.index("sliding_window"))
    panel.window_slider.setValue(8)
    assert panel.kinds.weight_map.values.shape == (64, 64) and panel.kinds.row_table.rowCount() == 64
    for values in all_shown_values(panel):
        assert not np.isnan(values).any()


def test_only_the_visible_step_is_redrawn_until_shown(panel):
    panel.set_step(0)
    panel.kind_combo.setCurrentIndex(masks.KINDS.index("none"))
    assert [page.stale for page in panel.step_pages] == [False, True, True, True]
    before = panel.additive.add_maps[0].values.copy()
    panel.set_step(1)
    assert [page.stale for page in panel.step_pages] == [False, False, True, True]
    assert not np.array_equal(panel.additive.add_maps[0].values, before)
    np.testing.assert_array_equal(panel.additive.add_maps[0].values, panel.kinds.weight_map.values)  # no mask


def test_switching_the_mask_kind_moves_no_view(panel, qtbot):
    """The family note keeps the room of its longest text: a new kind moves nothing below it
    (moving the views redrew every plot, a frame's worth of work per switch)."""
    from app.widgets import Heatmap

    panel.resize(1100, 860)
    panel.show()
    panel.tokens_edit.setText(" ".join(f"w{i}" for i in range(64)))
    panel.set_step(1)
    qtbot.wait(10)
    views = [view for view in panel.pages.currentWidget().findChildren(Heatmap) if view.isVisible()]
    assert views

    def places():
        return [view.geometry().getRect() for view in views]

    first = places()
    for kind in ("sliding_window", "global_local", "none", "causal"):
        panel.kind_combo.setCurrentIndex(masks.KINDS.index(kind))
        panel.pad_spin.setValue(0 if kind == "none" else 2)
        qtbot.wait(1)
        assert places() == first, kind


def test_exported_script_rebuilds_a_hand_drawn_mask(panel, tmp_path):
    """A symmetric window with one cell switched by hand and one padding token: the script
    writes the grid out and prints the mask, scores and weights the step draws."""
    from tests.app.test_export_scripts import drawn_numbers, printed_numbers, run_scripts, unprinted

    panel.kind_combo.setCurrentIndex(masks.KINDS.index("sliding_window"))
    panel.symmetric_box.setChecked(True)
    panel.pad_spin.setValue(1)
    panel.toggle_cell(0, 5)
    assert panel.settings.kind == "custom"
    path = tmp_path / "kinds.py"
    path.write_text(panel.script(0), encoding="utf-8")
    (run,) = run_scripts([path])
    assert run.returncode == 0, run.stderr
    assert not unprinted(drawn_numbers(panel), printed_numbers(run.stdout))
    cost = masks.cost(panel.result.mask)
    assert f"Computed cells: {cost.computed} of 64" in run.stdout


def test_the_sliding_window_names_the_decoders_here_that_use_one(qtbot, tmp_path, monkeypatch):
    from transformers import Gemma3TextConfig

    import app.panels.masks as masks_panel
    from app.panels.masks import MasksPanel
    from core.models.registry import describe, known_models

    config = Gemma3TextConfig(num_hidden_layers=6, sliding_window=4, architectures=["Gemma3ForCausalLM"])
    config.save_pretrained(tmp_path)
    tiny = describe("t", "Tiny", tmp_path)
    monkeypatch.setattr(masks_panel, "known_models", lambda: [*known_models(), tiny])
    p = MasksPanel()
    qtbot.addWidget(p)
    p.show()
    p.kind_combo.setCurrentIndex(masks.KINDS.index("sliding_window"))
    said = "On this computer: Tiny: a window of 4 tokens on 5 of its 6 layers (layer 6 sees the whole text)."
    assert said in p.family_note.text()
    p.kind_combo.setCurrentIndex(masks.KINDS.index("causal"))
    assert "On this computer" not in p.family_note.text()
