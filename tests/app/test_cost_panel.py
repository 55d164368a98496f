import numpy as np
import pytest

from app.panels.cost.state import ARTICLE_LENGTHS, N_MAX
from core.maths.attention import attend
from core.maths.complexity import MEMORY_SIZES, MIB, attention_cost, loglog_slope, pattern_cells
from core.maths.flash import tiled_attention
from core.maths.masks import causal, global_local
from tests.app.test_export_scripts import drawn_numbers, printed_numbers, run_scripts, unprinted

ARTICLE_FLOPS = [
    "117,440,512",
    "671,088,640",
    "1,879,048,192",
    "20,401,094,656",
    "287,762,808,832",
    "4,449,586,118,656",
]
ARTICLE_MB = ["0.1", "1.0", "4.0", "64.0", "1024.0", "16384.0"]


def column(table, col):
    return [table.item(row, col).text() for row in range(table.rowCount())]


def test_table_shows_the_articles_numbers(panel):
    table = panel.calculator.table
    assert column(table, 0) == [f"{n:,}" for n in ARTICLE_LENGTHS]
    assert column(table, 1) == ARTICLE_FLOPS
    mib = [float(t.replace(",", "")) for t in column(table, 3)]
    assert [f"{v:.1f}" for v in mib] == ARTICLE_MB
    assert column(table, 3)[0] == "0.0625"  # shown exactly; the article rounds it to 0.1
    assert column(table, 2)[3] == f"{4 * 4096**2 * 512:,}"


def test_curves_follow_core(panel):
    page = panel.calculator
    x = page.flops_curves["article"].xData
    assert x[0] == 128 and x[-1] == N_MAX and 4_096 in x
    expected = [attention_cost(int(n), 512).article_flops for n in x]
    np.testing.assert_array_equal(page.flops_curves["article"].yData, np.array(expected, dtype=float))
    np.testing.assert_array_equal(page.flops_curves["qkv"].yData, 3 * x * 512.0**2)
    np.testing.assert_array_equal(page.memory_curves["model"].yData, x.astype(float) ** 2 * 4)
    assert page.flops_slopes["qkv"].toPlainText() == "slope 1.00"
    assert page.flops_slopes["quadratic"].toPlainText() == "slope 2.00"
    k = list(x).index(4_096)
    expected_slope = loglog_slope(list(x), expected)[k]
    assert page.flops_slopes["article"].toPlainText() == f"slope {expected_slope:.2f}"
    assert 1.5 < expected_slope < 2.0
    assert page.n_lines[0].value() == pytest.approx(np.log10(4_096))


def test_memory_markers_are_where_the_matrices_stop_fitting(panel):
    page = panel.calculator
    xs, ys = page.crossings.xData, page.crossings.yData
    for (_label, size), n, y in zip(MEMORY_SIZES, xs, ys, strict=True):
        assert y == n * n * 4 > size >= (n - 1) ** 2 * 4
    assert "16 GiB laptop RAM at n = 65,537" in page.readout.text()
    page.layers_spin.setValue(32)
    page.heads_spin.setValue(32)
    assert page.crossings.xData[0] == 65_536 // 32 + 1  # 32·32 score matrices share the memory


def test_readout_and_model_totals(panel):
    page = panel.calculator
    text = page.readout.text()
    assert "total = 20,401,094,656" in text and "34,359,738,368" in text
    assert "2× the article's quadratic part" in text
    assert "64 MiB per head" in text
    page.heads_spin.setValue(8)
    page.layers_spin.setValue(6)
    page.batch_spin.setValue(2)
    page.dtype_box.setCurrentText("bf16")
    cost = attention_cost(4_096, 512, 8, layers=6, batch=2, dtype="bf16")
    assert page.cost == cost
    np.testing.assert_array_equal(
        page.memory_curves["layer"].yData[list(page.memory_curves["layer"].xData).index(4_096)],
        float(cost.score_bytes_per_layer),
    )
    assert "32 MiB per head, 512 MiB per layer, 3 GiB for the whole model" in page.readout.text()


def test_causal_halves_only_the_benchmark_count(panel):
    page = panel.calculator
    page.causal_box.setChecked(True)
    assert column(page.table, 1) == ARTICLE_FLOPS
    assert column(page.table, 2)[0] == f"{2 * 128**2 * 512:,}"
    assert "skips the hidden half" in page.readout.text()


def test_bad_cost_settings_keep_the_previous_state(panel):
    page = panel.calculator
    before = page.flops_curves["article"].yData.copy()
    for action, message in [
        (lambda: page.heads_spin.setValue(3), "divisible by the 3 heads"),
        (lambda: page.d_model_spin.setValue(0), "d_model must be a whole number of at least 1"),
        (lambda: page.d_model_spin.setValue(510), None),  # 510 = 3 × 170: valid again
        (lambda: page.layers_spin.setValue(0), "layers must be a whole number of at least 1"),
    ]:
        action()
        if message is None:
            assert not panel.message.isVisibleTo(panel)
            assert page.cost == attention_cost(4_096, 510, 3)
            before = page.flops_curves["article"].yData.copy()
            continue
        assert message in panel.message.text()
        np.testing.assert_array_equal(page.flops_curves["article"].yData, before)
    assert page.cost == attention_cost(4_096, 510, 3)
    page.layers_spin.setValue(2)
    assert page.cost == attention_cost(4_096, 510, 3, layers=2)


def test_article_settings_button(panel):
    page = panel.calculator
    page.d_model_spin.setValue(1_024)
    page.dtype_box.setCurrentText("fp8")
    page.article_button.click()
    assert column(page.table, 1) == ARTICLE_FLOPS
    assert page.state.dtype == "fp32" and page.d_model_spin.value() == 512


def test_handshakes(panel):
    page = panel.handshakes
    panel.set_step(1)
    assert len(page.lines.xData) == 2 * 45
    assert "10 people make 45 handshakes" in page.note.text() and "190" in page.note.text()
    page.people.setValue(20)
    assert len(page.lines.xData) == 2 * 190 and len(page.dots.xData) == 20
    np.testing.assert_allclose(np.hypot(page.dots.xData, page.dots.yData), 1.0)
    assert list(page.marks.yData) == [190, 780]


def flash_reference(n=16, d=4, block=(4, 4), mask=None, seed=0):
    rng = np.random.default_rng(seed)
    Q, K, V = (rng.normal(size=(n, d)) for _ in range(3))
    return tiled_attention(Q, K, V, *block, mask=mask), attend(Q, K, V, mask=mask)


def test_flash_step_view_matches_the_trace(panel):
    page = panel.flash
    panel.set_step(2)
    trace, naive = flash_reference()
    assert page.step_slider.maximum() == len(trace.steps) - 1 == 15
    page.step_slider.setValue(5)  # query block 1, key tile 1
    state = trace.state_after(5)
    np.testing.assert_allclose(page.state_view.values[:, 0], state.m)
    np.testing.assert_allclose(page.state_view.values[:, 1], state.l)
    np.testing.assert_allclose(page.state_view.values[:, 2:], state.output)
    step = trace.steps[5]
    np.testing.assert_allclose(page.tile_view.values[:, 2], step.m)
    np.testing.assert_allclose(page.tile_view.values[:, 3], step.rescale)
    np.testing.assert_allclose(page.tile_view.values[:, 1], trace.steps[4].m)
    done = trace.computed_cells(5)
    np.testing.assert_allclose(page.scores.values[done], naive.scaled[done])
    assert np.all(page.scores.values[~done] == -np.inf)
    rect = page.scores.marker.rect()
    assert (rect.x(), rect.y(), rect.width(), rect.height()) == (4, 4, 4, 4)
    assert page.state_view.rows == {4, 5, 6, 7}
    assert "Step 6 of 16" in page.step_note.text()


def test_flash_buttons_walk_the_tiles_and_the_end_equals_naive(panel):
    page = panel.flash
    panel.set_step(2)
    _, naive = flash_reference()
    assert not page.prev_button.isEnabled()
    for _ in range(20):
        page.next_button.click()
    assert page.step_slider.value() == 15 and not page.next_button.isEnabled()
    np.testing.assert_allclose(page.state_view.values[:, 2:], naive.output, atol=1e-12)
    assert np.all(np.isfinite(page.scores.values))
    error = float(page.check_note.text().split("= ")[-1].rstrip("."))
    assert error <= 1e-12
    page.prev_button.click()
    assert page.step_slider.value() == 14


def test_flash_memory_counter(panel):
    page = panel.flash
    panel.set_step(2)
    text = page.memory_note.text()
    assert "all n² = 256" in text and "4 × 4 tile (16)" in text and "<b>112</b>" in text
    page.n_spin.setValue(64)
    assert "all n² = 4,096" in page.memory_note.text() and "<b>400</b>" in page.memory_note.text()


def test_flash_causal_and_uneven_tiles(panel):
    page = panel.flash
    panel.set_step(2)
    page.causal_box.setChecked(True)
    page.bk_spin.setValue(5)
    trace, naive = flash_reference(block=(4, 5), mask=causal(16))
    assert page.step_slider.maximum() == len(trace.steps) - 1
    assert f"{len(trace.skipped)} tiles hidden by the mask are skipped" in page.check_note.text()
    page.step_slider.setValue(page.step_slider.maximum())
    np.testing.assert_allclose(page.state_view.values[:, 2:], naive.output, atol=1e-12)


def test_bad_flash_settings_keep_the_previous_state(panel):
    page = panel.flash
    panel.set_step(2)
    page.step_slider.setValue(3)
    before = page.state_view.values.copy()
    for spin, value, message in [
        (page.bq_spin, 0, "block_q must be a whole number of at least 1"),
        (page.bk_spin, 17, "block_k = 17 is larger than the 16 keys"),
        (page.n_spin, 0, "at least one query"),
        (page.d_spin, 0, "d_k ≥ 1"),
    ]:
        previous = spin.value()
        spin.setValue(value)
        assert message in panel.message.text()
        np.testing.assert_array_equal(page.state_view.values, before)
        assert len(page.trace.steps) == 16 and np.all(np.isfinite(page.state_view.values[:, 1:]))
        spin.setValue(previous)
        assert not panel.message.isVisibleTo(panel)


def test_sparse_counts_and_picture(panel):
    page = panel.sparse
    panel.set_step(3)
    x = page.cell_curves["window"].xData
    expected = [pattern_cells(int(n), 8, 0) for n in x]
    np.testing.assert_array_equal(page.cell_curves["window"].yData, np.array(expected, dtype=float))
    np.testing.assert_allclose(page.fraction_curves["full"].yData, 1.0)
    np.testing.assert_array_equal(page.picture.values, global_local(48, 8, range(2)).astype(float))
    assert f"{pattern_cells(4_096, 8, 2):,}" in page.note.text()
    assert page.cell_slopes["window"].toPlainText() == "slope 1.00"
    assert page.cell_slopes["full"].toPlainText() == "slope 2.00"
    page.causal_box.setChecked(True)
    np.testing.assert_array_equal(page.picture.values, global_local(48, 8, range(2), causal=True))
    page.global_spin.setValue(49)
    assert "at most 48 global tokens" in panel.message.text()
    assert page.state.n_global == 2


def test_steps_switch_pages_and_clear_messages(panel):
    panel.calculator.heads_spin.setValue(3)
    assert panel.message.isVisibleTo(panel)
    for i in range(len(panel.steps)):
        panel.set_step(i)
        assert panel.pages.currentIndex() == i
    assert not panel.message.isVisibleTo(panel)
    assert set(panel.export()) >= {"flops", "score_memory", "flash_scores", "sparse_cells"}


def test_exercise_ends_in_a_valid_state(panel):
    panel.exercise()
    assert panel.step == 2
    assert panel.calculator.cost == attention_cost(4_096, 512)
    assert np.all(np.isfinite(panel.flash.state_view.values[:, 1:]))
    assert panel.sparse.state.window == 8
    assert MIB == 2**20


def test_cost_states_compute_without_a_panel():
    from app.panels.cost.state import (
        CostState,
        HandshakeState,
        SparseState,
        compute_cost,
        compute_handshakes,
        compute_sparse,
    )

    r = compute_cost(CostState(n=1_024, layers=2))
    k = r.grid.index(1_024)
    assert r.flops["article"][k] == 2 * attention_cost(1_024, 512, 1).article_flops
    assert [row[1] for row in r.table] == ARTICLE_FLOPS  # the table is per layer, as printed
    with pytest.raises(ValueError, match="at most 48 global tokens"):
        compute_sparse(SparseState(n_global=49))
    h = compute_handshakes(HandshakeState(people=4))
    assert h.now == 6 and h.doubled == 28 and len(h.ends) == 12


def test_the_flash_script_shows_the_tile_step_on_screen(panel, tmp_path):
    page = panel.flash
    page.causal_box.setChecked(True)
    page.bk_spin.setValue(5)
    page.step_slider.setValue(5)
    panel.set_step(2)
    path = tmp_path / "flash.py"
    path.write_text(panel.script(2), encoding="utf-8")
    (run,) = run_scripts([path])
    assert run.returncode == 0, run.stderr
    assert f"Step 6 of {len(page.trace.steps)}:" in run.stdout
    assert not unprinted(drawn_numbers(panel), printed_numbers(run.stdout))
