import numpy as np
import pytest
from PySide6.QtCore import QVariantAnimation

from app.panels.position.state import HEATMAP_ROWS
from core.maths import positional as pos
from tests.app.test_export_scripts import drawn_numbers, printed_numbers, run_scripts, unprinted


def error_shown(panel, text):
    return (
        panel.message.isVisibleTo(panel) and panel.message.level == "error" and text in panel.message.text()
    )


def test_word_order_is_invisible_until_positions_are_encoded(panel):
    page = panel.order
    t = pos.permutation_attention("dog bites man", "man bites dog", 8, np.random.default_rng(0))
    np.testing.assert_allclose(page.map_a.values, t.a.weights)
    np.testing.assert_allclose(page.map_b.values, t.a.weights[::-1, ::-1], atol=1e-15)
    assert page.map_b.row_labels == ["man", "bites", "dog"]
    x, y = page.link_lines.getData()
    assert x.tolist() == [0, 2, 1, 1, 2, 0] and y.tolist() == [1, 0, 1, 0, 1, 0]
    assert t.difference < 1e-12 and f"{t.difference:.1e}" in page.summary.text()  # zero up to rounding
    assert "invisible" in page.summary.text()
    page.encoding.setCurrentIndex(page.encoding.findData("rope"))
    assert page.trace.difference > 1e-3 and "now changes" in page.summary.text()
    np.testing.assert_allclose(page.map_a.values, page.trace.a.weights)


def test_sentences_with_different_words_are_refused(panel):
    before = panel.order.map_b.values.copy()
    panel.order.edit_b.setText("cat bites man")
    assert error_shown(panel, "same words")
    np.testing.assert_array_equal(panel.order.map_b.values, before)
    panel.order.edit_b.setText("bites man dog")
    assert not panel.message.isVisibleTo(panel)
    assert panel.order.map_b.row_labels == ["bites", "man", "dog"]


def test_sinusoidal_views_match_core(panel):
    page = panel.sinusoidal
    panel.set_step(1)
    np.testing.assert_allclose(page.heatmap.values, pos.sinusoidal(128, 64))
    x, y = page.dot_curve.getData()
    assert x[0] == -127 and x[-1] == 127
    np.testing.assert_allclose(y, pos.sinusoidal_offset_dot(np.arange(-127, 128), 64))
    x, y = page.curves[0].getData()
    np.testing.assert_allclose(y, np.sin(x))  # pair 0 turns at one radian per position


def test_a_million_positions_are_sampled_not_built(panel):
    page = panel.sinusoidal
    panel.set_step(1)
    page.n_spin.setValue(1_000_000)
    assert page.heatmap.values.shape == (HEATMAP_ROWS, 64)
    assert page.heatmap.row_labels[-1] == "999,999"
    np.testing.assert_allclose(page.heatmap.values[-1], pos.sinusoidal_at([999_999], 64)[0])
    assert panel.message.level == "info" and "512 of 1,000,000 positions" in panel.message.text()


@pytest.mark.parametrize(
    ("spin", "value", "message"),
    [("n_spin", 0, "at least 1"), ("d_spin", 7, "pairs"), ("base_spin", 0.0, "greater than 1")],
)
def test_bad_sinusoidal_settings_keep_the_view(panel, spin, value, message):
    page = panel.sinusoidal
    panel.set_step(1)
    before = page.heatmap.values.copy()
    getattr(page, spin).setValue(value)
    assert error_shown(panel, message)
    np.testing.assert_array_equal(page.heatmap.values, before)
    assert np.all(np.isfinite(page.heatmap.values))


def test_learned_table_says_where_it_runs_out(panel):
    page = panel.table
    panel.set_step(2)
    assert not panel.message.isVisibleTo(panel)
    page.length_spin.setValue(1500)
    assert panel.message.level == "warning"
    assert "No vector for position 1,025" in panel.message.text()
    x, _ = page.uncovered.getData()
    assert x.tolist() == [1024.5, 1500.5]
    assert page.end_line.value() == 1024.5
    assert page.heatmap.row_labels[0] == "1" and page.heatmap.row_labels[-1] == "1,024"
    panel.set_step(0)
    assert not panel.message.isVisibleTo(panel)
    panel.set_step(2)
    assert "position 1,025" in panel.message.text()
    page.rows_spin.setValue(2048)
    assert not panel.message.isVisibleTo(panel)
    assert page.uncovered.getData()[0] is None or len(page.uncovered.getData()[0]) == 0


def test_rope_hands_follow_the_positions(panel):
    page = panel.rope
    panel.set_step(3)
    page.m_slider.setValue(9)
    assert page.animation.state() == QVariantAnimation.State.Running
    page.finish_animation()
    r, s = page.result, page.state
    q_hands, k_hands = page.clocks.hands
    np.testing.assert_allclose(q_hands, pos.rope(r.q, 9, s.base).reshape(-1, 2)[r.pairs])
    np.testing.assert_allclose(k_hands, pos.rope(r.k, 2, s.base).reshape(-1, 2)[r.pairs])
    arrow = page.clocks.arrows[0][0]
    assert arrow.rotation() == pytest.approx(180 - np.degrees(np.arctan2(*q_hands[0][::-1])))
    x, y = page.score_now.getData()
    assert x[0] == 7 and y[0] == pytest.approx(pos.rope_score(r.q, r.k, 9, 2))


def test_animation_passes_through_intermediate_positions(panel):
    page = panel.rope
    panel.set_step(3)
    page.m_slider.setValue(25)
    page._frame(0.5)
    assert page.shown == (15.0, 2.0)


def test_moving_both_keeps_the_score(panel):
    page = panel.rope
    panel.set_step(3)
    before = page.result.score
    page.shift_slider.setValue(10_000)
    page.finish_animation()
    assert abs(page.result.score - before) < 1e-9
    assert page.result.m == 10_005 and "below 10⁻⁹" in page.readout.text()


def test_odd_rope_width_explains_pairs(panel):
    page = panel.rope
    panel.set_step(3)
    before = [h.copy() for h in page.clocks.hands]
    page.d_spin.setValue(7)
    assert error_shown(panel, "pairs")
    for old, new in zip(before, page.clocks.hands, strict=True):
        np.testing.assert_array_equal(old, new)
    page.d_spin.setValue(64)
    assert len(page.clocks.titles) == 16 and page.result.pairs[-1] == 31


def test_extension_curves_match_core(panel):
    page = panel.extension
    panel.set_step(4)
    w = pos.frequencies(128)
    for method, curve in page.over_curves.items():
        f = pos.extended_frequencies(method, 128, 1e4, 4096, 32768)
        np.testing.assert_allclose(curve.yData, pos.overshoot(f, w, 4096, 32768))
    assert "YaRN: 0 pairs" in page.summary.text() and "NTK-aware: 17 pairs" in page.summary.text()
    page.method_box.setCurrentIndex(page.method_box.findData("none"))
    assert len(page.unseen_marks.getData()[0]) == 18
    assert "unchanged" in page.formula.text()


def test_extension_refuses_a_shorter_target(panel):
    page = panel.extension
    panel.set_step(4)
    page.target_spin.setValue(1000)
    assert error_shown(panel, "shorter than the trained length")
    assert page.state.target == 32768


def test_exercise_ends_on_a_valid_rope_view(panel):
    panel.exercise()
    assert panel.step == 3
    assert all(np.all(np.isfinite(h)) for h in panel.rope.clocks.hands)


def test_the_rope_script_rebuilds_the_moved_positions_and_seed(panel, tmp_path):
    page = panel.rope
    page.seed_spin.setValue(7)
    page.m_slider.setValue(30)
    page.shift_slider.setValue(500)
    page.finish_animation()
    panel.set_step(3)
    path = tmp_path / "rope.py"
    path.write_text(panel.script(3), encoding="utf-8")
    (run,) = run_scripts([path])
    assert run.returncode == 0, run.stderr
    assert f"q·k at m = 530, n = 502: {page.result.score:.6g}" in run.stdout
    assert not unprinted(drawn_numbers(panel), printed_numbers(run.stdout))
