"""Panel "Patching" on a tiny random Llama with grouped-query attention: every grid drawn is
core's, sweeps run in the worker and can be cancelled, bad input keeps the last grids."""

import itertools

import numpy as np
import pytest

from app.panels.patching import PatchingPanel
from app.panels.patching.state import decoder
from core.interp.attribution import attribute
from core.interp.patching import patch, prepare
from tests.app.conftest import idle, settle
from tests.app.readable import blank_beside
from tests.waits import patience, patience_ms

pytestmark = pytest.mark.models
pytest.importorskip("torch")
pytest.importorskip("transformers")

CLEAN = "the cat sat on the mat because the cat"
CORRUPT = "the cat sat in the mat because the cat"


@pytest.fixture
def panel(qtbot, llama_folder):
    p = PatchingPanel()
    qtbot.addWidget(p)
    p.resize(1300, 850)
    p.show()
    idle()
    p.runs.apply(source=llama_folder, clean=CLEAN, corrupt=CORRUPT, target="the", foil="because")
    idle(120)
    return p


def core_pair(folder):
    model = decoder(folder)
    return model, prepare(model, CLEAN, CORRUPT, "the", "because")


def assert_same_grid(shown, grid) -> None:
    """The panel's normalised cells against core's ``grid``: the metrics (logit differences of a
    few units) agree to the float32 rounding of runs batched otherwise, 2e-5 of their size, which
    the normalising divides by the clean-corrupted distance."""
    size = max(1.0, float(np.nanmax(np.abs(grid.raw))), abs(grid.clean), abs(grid.corrupt))
    np.testing.assert_allclose(shown, grid.values, atol=2e-5 * size / abs(grid.clean - grid.corrupt))


def hooks(module) -> int:
    return sum(len(m._forward_pre_hooks) + len(m._forward_hooks) for m in module.modules())


def test_two_runs_show_the_split_and_both_metrics(panel, llama_folder):
    model, pair = core_pair(llama_folder)
    approx = attribute(model, pair)
    assert panel.runs.result.clean == pytest.approx(approx.clean, abs=1e-4)
    assert f"{panel.runs.result.clean:.3f}" in panel.runs.metrics.text()
    assert "position 7" in panel.runs.tokens.text() and "#d62728" in panel.runs.tokens.text()
    assert panel.runs.clean_bars.count > 0 and panel.runs.corrupt_bars.count > 0


def test_each_step_sweeps_core_grids(panel, qtbot, llama_folder):
    model, pair = core_pair(llama_folder)
    before = hooks(model.module)  # transformers' own
    settle(panel.set_step, 1)
    assert_same_grid(panel.stream.map.values, patch(model, pair, "resid"))
    settle(panel.set_step, 2)
    assert_same_grid(panel.parts.mlp_map.values, patch(model, pair, "mlp"))
    settle(panel.set_step, 3)
    assert_same_grid(panel.heads.heads_map.values, patch(model, pair, "heads"))
    assert "Knockout" in panel.heads.compare.text()
    settle(panel.heads.choose, 1, 2)
    assert_same_grid(panel.heads.head_map.values, patch(model, pair, "head", head=(1, 2)))
    settle(panel.set_step, 4)
    assert_same_grid(panel.approx.approx_map.values, attribute(model, pair).grid("resid"))
    assert "Correlation" in panel.approx.summary.text()
    assert hooks(model.module) == before


def test_direction_switch_sweeps_the_other_way(panel, llama_folder):
    model, pair = core_pair(llama_folder)
    settle(panel.set_step, 1)
    settle(panel.stream.direction.setCurrentIndex, 1)
    assert panel.runs.state.direction == "noise"
    assert_same_grid(panel.stream.map.values, patch(model, pair, "resid", "noise"))


def test_bad_pair_says_why_and_keeps_the_grid(panel):
    settle(panel.set_step, 1)
    before = panel.stream.map.values.copy()
    settle(panel.runs.corrupt.setText, "the cat sat on a mat because the cat")
    assert "different numbers of tokens" in panel.message.text()
    np.testing.assert_array_equal(panel.stream.map.values, before)
    settle(panel.runs.corrupt.setText, CORRUPT)
    settle(panel.runs.foil.setText, "the")
    assert "same token" in panel.message.text()


def test_cancel_stops_the_sweep_and_leaves_the_model_clean(panel, llama_folder):
    model, _ = core_pair(llama_folder)
    before = hooks(model.module)
    panel.set_step(3)
    panel.heads.cancel_button.click()
    idle(120)
    assert panel.runs.live.task is None and hooks(model.module) == before


def drawn_labels(axis) -> list[str]:
    """The tick labels ``axis`` draws (pyqtgraph drops one that would run past the axis' ends)."""
    from PySide6.QtGui import QImage, QPainter

    image = QImage(10, 10, QImage.Format.Format_ARGB32)
    painter = QPainter(image)
    try:
        painter.setFont(axis.style["tickFont"] or axis.font())
        _, _, texts = axis.generateDrawSpecs(painter)
    finally:
        painter.end()
    return [text for _, _, text in sorted(texts, key=lambda spec: spec[0].left())]


@pytest.mark.parametrize("steps", [0, 2, 4], ids=["default text", "text+2", "text+4"])
def test_the_stream_labels_the_changed_and_the_last_position(panel, qtbot, steps):
    """Step 2 labelled every fourth position, from the first: the two bright columns (the changed
    token, the last position) had no label. They are labelled first, by their tokens or else by
    their numbers, in a panel as wide as a 1280 × 720 window gives it, at lecture text sizes too."""
    from PySide6.QtWidgets import QApplication

    from app.panels.patching.sweep import position_ticks
    from app.theme import style_plots
    from app.window import SCALE_STEP

    app = QApplication.instance()
    normal = app.font()
    try:
        larger = app.font()
        larger.setPointSizeF(normal.pointSizeF() * SCALE_STEP**steps)
        app.setFont(larger)
        panel.resize(860, 620)
        settle(panel.set_step, 1)
        style_plots(panel)
        for _ in range(5):
            QApplication.processEvents()
        pair = panel.runs.result.pair
        ticks = position_ticks(pair)
        drawn = drawn_labels(panel.stream.map.plot.getAxis("top"))
        for k in (*pair.differ, pair.length - 1):
            assert ticks[k] in drawn or str(k + 1) in drawn, (k, ticks[k], drawn)
        if steps == 0:  # at the default size there is room for other tokens too
            assert len(drawn) > len(pair.differ) + 1, drawn
    finally:
        app.setFont(normal)


def test_the_sweeps_progress_says_what_it_counts_before_and_after(qtbot, tmp_path, monkeypatch):
    """Beside "Cancel the sweep" sat an empty box, the progress bar before its first sweep (here:
    no model yet, as while SmolLM2 is being added): it says no sweep ran, then how it went."""
    monkeypatch.setenv("ATTENTION_LAB_DATA", str(tmp_path))  # an empty data folder: no SmolLM2
    p = PatchingPanel()
    qtbot.addWidget(p)
    p.resize(1300, 850)
    p.show()
    idle()
    for step, page in enumerate([p.stream, p.parts, p.heads, p.approx], 1):
        p.set_step(step)
        qtbot.waitUntil(lambda page=page: page.cancel_button.isVisible(), timeout=patience_ms(5))
        idle()  # the step's compute ends: no model to sweep with
        assert not blank_beside(page.cancel_button), (step, blank_beside(page.cancel_button))
        assert page.progress.text() == "not swept" and page.progress.toolTip()


def test_a_finished_or_cancelled_sweep_says_so(panel):
    settle(panel.set_step, 1)
    assert panel.stream.progress.text() == "swept"
    panel.set_step(3)
    panel.heads.cancel_button.click()
    assert panel.heads.progress.text().startswith("stopped")
    idle(120)


@pytest.fixture
def held(monkeypatch):
    """Sweeps that stop after their first batch of cells until ``held.set()`` (a
    threading.Event): the batch has landed in the panel's state by then."""
    import threading

    from app.panels.patching import state

    gate, real = threading.Event(), state.patch

    def first_batch_then_wait(model, pair, what, direction, head, progress, partial):
        def keep(grid):
            partial(grid)
            gate.wait(patience(30))

        return real(model, pair, what, direction, head, progress, keep)

    monkeypatch.setattr(state, "patch", first_batch_then_wait)
    yield gate
    gate.set()


def swept(panel) -> int:
    """The cells of the stream grid in the panel's state."""
    r = panel.runs.result
    grid = None if r is None else r.grids.get("resid")
    return 0 if grid is None else int(np.isfinite(grid.raw).sum())


def test_cells_arrive_in_the_state_in_order_with_progress(panel, qtbot, llama_folder):
    landed, progress = [], []
    panel.runs.live.changed.connect(lambda: landed.append(panel.runs.result))
    panel.runs.live.progressed.connect(lambda done, total: progress.append((done, total)))
    settle(panel.set_step, 1)  # sweeps the first pair, unless an earlier test kept its grid
    progress.clear()
    corrupt = CLEAN.replace(" on ", " at ")  # a pair no other test sweeps: nothing kept yet
    settle(panel.runs.apply, corrupt=corrupt)
    ours = [r for r in landed if r.state.corrupt == corrupt]
    filled = [np.isfinite(r.grids["resid"].raw) for r in ours if "resid" in r.grids]
    assert len(filled) >= 3 and filled[-1].all() and ours[0].missing == ("resid",) and ours[-1].missing == ()
    for before, after in itertools.pairwise(filled):  # each holds every cell the one before held
        assert (after >= before).all()
    dones = [done for done, total in progress if total == filled[-1].size]
    assert dones == sorted(dones) and dones[-1] == filled[-1].size
    model, _ = core_pair(llama_folder)
    pair = prepare(model, CLEAN, corrupt, "the", "because")
    assert_same_grid(panel.stream.map.values, patch(model, pair, "resid"))
    assert panel.stream.progress.text() == "swept"


def test_cancel_mid_sweep_keeps_the_cells_run_and_says_what_is_missing(panel, qtbot, held):
    panel.runs.apply(corrupt=CLEAN.replace(" on ", " a "))
    panel.set_step(1)
    qtbot.waitUntil(lambda: swept(panel) > 0, timeout=patience_ms(30))
    part = swept(panel)
    panel.stream.cancel_button.click()
    held.set()
    idle()
    r = panel.runs.result
    assert swept(panel) == part < r.grids["resid"].raw.size and r.missing == ("resid",)
    assert panel.stream.progress.text().startswith("stopped")
    assert panel.stream.status.text() == f"{part} of {r.grids['resid'].raw.size} cells"
    np.testing.assert_array_equal(panel.stream.map.values, r.grids["resid"].values)  # drawn as held
    settle(panel.set_step, 2)
    settle(panel.set_step, 1)  # shown again: swept whole
    assert swept(panel) == r.grids["resid"].raw.size and panel.runs.result.missing == ()


def test_a_new_prompt_mid_sweep_leaves_no_stale_cell(panel, qtbot, llama_folder, held):
    landed = []
    panel.runs.live.changed.connect(lambda: landed.append(panel.runs.result))
    panel.runs.apply(corrupt=CLEAN.replace(" on ", " dog "))
    panel.set_step(1)
    qtbot.waitUntil(lambda: swept(panel) > 0, timeout=patience_ms(30))
    newer = CLEAN.replace(" on ", " sat ")
    panel.runs.apply(corrupt=newer)
    held.set()
    idle()
    for r in landed:  # every grid drawn is of its own state's pair
        if "resid" in r.grids:
            assert r.grids["resid"].corrupt == pytest.approx(r.corrupt, abs=1e-5), r.state.corrupt
    model, _ = core_pair(llama_folder)
    pair = prepare(model, CLEAN, newer, "the", "because")
    assert panel.runs.result.state.corrupt == newer and panel.runs.result.missing == ()
    assert_same_grid(panel.stream.map.values, patch(model, pair, "resid"))


def test_a_lesson_saved_mid_sweep_reopens_the_same(panel, qtbot, held, llama_folder):
    from app import lesson_files

    panel.set_step(3)
    panel.runs.apply(corrupt=CLEAN.replace(" on ", " to "), direction="noise")
    panel.heads.heads_map.clicked.emit(1, 0)  # layer 2, head 1
    qtbot.waitUntil(lambda: panel.runs.result.grids.get("heads") is not None, timeout=patience_ms(30))
    lesson = lesson_files.capture(panel)
    held.set()
    idle()
    again = PatchingPanel()
    qtbot.addWidget(again)
    again.resize(1300, 850)
    again.show()
    idle()
    settle(again.runs.apply, source=llama_folder)
    assert lesson_files.apply(again, lesson) == []
    idle()
    assert again.runs.state == panel.runs.state and again.step == 3
    assert again.runs.result.chosen == (1, 0) == panel.runs.result.chosen
    for view in ("heads_map", "knock_map", "head_map"):
        np.testing.assert_allclose(getattr(again.heads, view).values, getattr(panel.heads, view).values)
    assert again.heads.head_map.plot.titleLabel.text == "L2 H1 by position"


def test_a_head_that_does_not_exist_is_refused_and_the_grids_stay(panel):
    settle(panel.set_step, 3)
    before = panel.heads.heads_map.values.copy()
    settle(panel.heads.layer.setValue, 9)
    assert "Layer 9, head 1 does not exist" in panel.message.text()
    np.testing.assert_array_equal(panel.heads.heads_map.values, before)
    settle(panel.heads.layer.setValue, 0)  # best: the head patching ranks first
    r = panel.runs.result
    assert r.chosen == np.unravel_index(np.argmax(r.grids["heads"].values), r.grids["heads"].values.shape)
