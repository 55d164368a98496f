"""Panel "Patching" on a tiny random Llama with grouped-query attention: every grid drawn is
core's, sweeps run in the worker and can be cancelled, bad input keeps the last grids."""

import numpy as np
import pytest

from app.panels.patching import PatchingPanel
from app.panels.patching.state import decoder
from core.interp.attribution import attribute
from core.interp.patching import patch, prepare
from tests.app.conftest import idle, settle
from tests.app.readable import blank_beside
from tests.waits import patience_ms

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
    np.testing.assert_allclose(panel.stream.map.values, patch(model, pair, "resid").values, atol=1e-5)
    settle(panel.set_step, 2)
    np.testing.assert_allclose(panel.parts.mlp_map.values, patch(model, pair, "mlp").values, atol=1e-5)
    settle(panel.set_step, 3)
    np.testing.assert_allclose(panel.heads.heads_map.values, patch(model, pair, "heads").values, atol=1e-5)
    assert "Knockout" in panel.heads.compare.text()
    settle(panel.heads.choose, 1, 2)
    head = patch(model, pair, "head", head=(1, 2)).values
    np.testing.assert_allclose(panel.heads.head_map.values, head, atol=1e-5)
    settle(panel.set_step, 4)
    approx = attribute(model, pair).grid("resid").values
    np.testing.assert_allclose(panel.approx.approx_map.values, approx, atol=1e-5)
    assert "Correlation" in panel.approx.summary.text()
    assert hooks(model.module) == before


def test_direction_switch_sweeps_the_other_way(panel, llama_folder):
    model, pair = core_pair(llama_folder)
    settle(panel.set_step, 1)
    settle(panel.stream.direction.setCurrentIndex, 1)
    assert panel.runs.state.direction == "noise"
    noise = patch(model, pair, "resid", "noise").values
    np.testing.assert_allclose(panel.stream.map.values, noise, atol=1e-5)


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
    panel.heads.cancel()
    idle(120)
    assert panel.heads.task is None and hooks(model.module) == before


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
    for step, page in enumerate(p.sweeps(), 1):
        p.set_step(step)
        qtbot.waitUntil(lambda page=page: page.cancel_button.isVisible(), timeout=patience_ms(5))
        assert not blank_beside(page.cancel_button), (step, blank_beside(page.cancel_button))
        assert page.progress.text() == "not swept" and page.progress.toolTip()


def test_a_finished_or_cancelled_sweep_says_so(panel):
    settle(panel.set_step, 1)
    assert panel.stream.progress.text() == "swept"
    panel.set_step(3)
    panel.heads.cancel()
    assert panel.heads.progress.text().startswith("stopped")
    idle(120)
