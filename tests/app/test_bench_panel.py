import json
import subprocess
import sys
import threading
from pathlib import Path

import numpy as np
import pytest
from PySide6.QtCore import Qt

from app import worker
from app.panels.bench import BenchPanel
from app.panels.bench.state import COLUMNS, row_texts
from core.bench.device import cuda_available
from core.bench.sweep import MEANINGFUL_SLOPE_LENGTHS, fastest_summary, fit_slopes, withheld_slopes
from tests.app.conftest import idle
from tests.app.test_export_scripts import run_scripts
from tests.waits import patience, patience_ms

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def panel(panel, qtbot):
    """The shared panel fixture, once the device's choices are known, with small sizes."""
    p = panel
    qtbot.waitUntil(lambda: p.form.choices is not None, timeout=patience_ms(60))
    p.form.heads_spin.setValue(2)
    p.form.head_dim_spin.setValue(16)
    p.form.repeats_spin.setValue(3)
    return p


def run_sweep(panel, qtbot, lengths, impls):
    panel.form.lengths_edit.setText(lengths)
    panel.form.select_impls(impls)
    panel.run()
    assert panel.live.task is not None
    qtbot.waitUntil(lambda: panel.live.task is None, timeout=patience_ms(60))


def table_rows(panel):
    t = panel.table
    return [[t.item(r, c).text() for c in range(t.columnCount())] for r in range(t.rowCount())]


def test_importing_or_building_the_panel_does_not_import_torch():
    code = (
        "import sys; from PySide6.QtWidgets import QApplication; app = QApplication([]);"
        "from app.panels import PANELS; from app.panels.bench import BenchPanel; p = BenchPanel();"
        "print('torch' in sys.modules)"
    )
    out = subprocess.run(
        [sys.executable, "-c", code],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=patience(120),
        env={"QT_QPA_PLATFORM": "offscreen", "PATH": ""},
    )
    assert out.stdout.strip() == "False", out.stderr


@pytest.mark.models  # torch's implementations
def test_only_the_devices_backends_can_be_chosen(panel):
    devices = [panel.form.device_combo.itemText(i) for i in range(panel.form.device_combo.count())]
    assert devices == (["cpu", "cuda"] if cuda_available() else ["cpu"])
    items = {item.data(Qt.ItemDataRole.UserRole): item for item in map(panel.form.impl_list.item, range(8))}
    assert not items["sdpa-efficient"].flags() & Qt.ItemFlag.ItemIsEnabled
    assert items["sdpa-efficient"].toolTip() == "Not available: SDPA EFFICIENT_ATTENTION has no CPU kernel"
    assert items["sdpa-flash"].flags() & Qt.ItemFlag.ItemIsEnabled
    assert panel.form.selected_impls() == ("numpy-naive", "torch-naive", "sdpa-math", "sdpa-flash")
    assert panel.form.run_button.isEnabled()


@pytest.mark.models  # torch's implementations
def test_a_sweep_fills_the_table_and_the_plots_from_core(panel, qtbot):
    run_sweep(panel, qtbot, "64 128", ("numpy-naive", "numpy-tiled", "sdpa-flash"))
    results = panel.report.results
    assert list(results) == panel.results
    assert [(r.n, r.impl) for r in results] == panel.config.points()
    assert table_rows(panel) == [row_texts(r) for r in results]
    assert table_rows(panel)[1][-1] == "not available: core.maths.flash computes in float64 only; choose fp64"
    for impl in ("numpy-naive", "sdpa-flash"):
        ran = [r for r in results if r.impl == impl]
        x, y = panel.curves["median_s"][impl].xData, panel.curves["median_s"][impl].yData
        np.testing.assert_array_equal(x, [64, 128])
        np.testing.assert_array_equal(y, [r.median_s for r in ran])
        panel.set_step(2)  # the throughput plot is drawn when its step is shown
        y = panel.curves["tflops"][impl].yData
        np.testing.assert_array_equal(y, [r.tflops for r in ran])
        panel.set_step(0)
        label = panel.legends["median_s"].getLabel(panel.curves["median_s"][impl])
        assert label.text == f"{impl}  (slope needs 3 lengths)"  # two lengths give no slope
    assert panel.curves["median_s"]["numpy-tiled"].xData is None
    assert panel.summary.text() == fastest_summary(results)
    assert panel.form.progress.value() == 6 and panel.form.progress.format() == "6 points done"
    assert panel.form.run_button.isEnabled() and not panel.form.cancel_button.isEnabled()
    assert all(r.max_abs_error < 1e-5 for r in results if r.ok)


@pytest.mark.models  # torch's implementations
def test_slopes_come_from_three_lengths_with_the_clis_fit(panel, qtbot):
    # Score matrices of 2 MiB and up: memory is read from the resident set, which Linux counts in
    # batches and where small buffers can reuse freed memory; smaller ones can read 0 (no slope).
    # The sweep's first point, in a fresh worker thread, is the one that used to read short.
    run_sweep(panel, qtbot, "512 1024 2048", ("numpy-naive", "torch-naive"))
    results = panel.report.results
    for field in ("median_s", "peak_bytes"):
        slopes = fit_slopes(results, field, MEANINGFUL_SLOPE_LENGTHS)
        noisy = withheld_slopes(results, field, MEANINGFUL_SLOPE_LENGTHS)  # a busy machine's timing
        panel.set_step(0 if field == "median_s" else 3)
        for impl in ("numpy-naive", "torch-naive"):
            label = panel.legends[field].getLabel(panel.curves[field][impl])
            if impl in noisy:
                assert label.text == f"{impl}  (no slope: a point's timing is noise; run it again)"
            else:
                assert label.text == f"{impl}  slope {slopes[impl]:.2f}"
    panel.set_step(2)
    label = panel.legends["tflops"].getLabel(panel.curves["tflops"]["torch-naive"])
    assert label.text == "torch-naive"  # throughput has no slope


def test_cancel_stops_within_a_point_and_keeps_what_ran(panel, qtbot, tmp_path):
    panel.form.repeats_spin.setValue(100)
    panel.live.changed.connect(panel.cancel)  # cancel as soon as the first point lands
    run_sweep(panel, qtbot, "64:4096", ("numpy-naive",))
    idle(10)
    ran = len(panel.results)  # nothing the cancelled sweep reports later lands
    assert ran == 1 and panel.table.rowCount() == ran and not worker.busy()
    assert panel.report is None
    assert panel.message.text() == f"Cancelled after {ran} of 7 points."
    assert panel.form.run_button.isEnabled()
    panel.save_results(tmp_path / "partial.json")
    data = json.loads((tmp_path / "partial.json").read_text())
    assert [r["n"] for r in data["results"]] == [64, 128][:ran]


@pytest.mark.parametrize(
    ("lengths", "impls", "message"),
    [
        ("0, abc", ("numpy-naive",), "Each sequence length must be a whole number from 1 to 1,048,576"),
        ("128 -4", ("numpy-naive",), "-4 is out of range"),
        ("99999999999999999999", ("numpy-naive",), "from 1 to 1,048,576"),
        ("128", (), "Choose at least one implementation."),
    ],
)
def test_bad_input_keeps_the_previous_results(panel, qtbot, lengths, impls, message):
    run_sweep(panel, qtbot, "64", ("numpy-naive",))
    before = table_rows(panel)
    panel.form.lengths_edit.setText(lengths)
    panel.form.select_impls(impls)
    panel.run()
    assert panel.live.task is None
    assert message in panel.message.text() and panel.message.level == "error"
    assert table_rows(panel) == before
    assert len(panel.curves["median_s"]["numpy-naive"].yData) == 1


def test_cancel_before_the_first_point_says_none_ran(panel, qtbot):
    panel.form.lengths_edit.setText("64 128")
    panel.form.select_impls(("numpy-naive",))
    panel.run()
    panel.cancel()
    idle(10)
    assert panel.message.text() == "Cancelled after 0 of 2 points." and panel.results == []
    assert panel.form.run_button.isEnabled() and not worker.busy()


def test_a_second_sweep_replaces_the_first_one_point_at_a_time(panel, qtbot):
    run_sweep(panel, qtbot, "64 128", ("numpy-naive",))
    first = panel.live.result
    seen = []
    panel.live.changed.connect(lambda: seen.append(len(panel.results)))
    run_sweep(panel, qtbot, "32 48 64", ("numpy-naive",))
    assert seen == [1, 2, 3, 3] and panel.table.rowCount() == 3  # each point, then the whole report
    assert [r.n for r in panel.results] == [32, 48, 64] and panel.live.result is not first
    assert table_rows(panel) == [row_texts(r) for r in panel.results]


def test_export_writes_csv_and_json_of_the_report(panel, qtbot, tmp_path):
    with pytest.raises(ValueError, match="Run a sweep first"):
        panel.save_results(tmp_path / "early.csv")
    run_sweep(panel, qtbot, "64", ("numpy-naive", "torch-naive"))
    panel.save_results(tmp_path / "r.csv")
    panel.save_results(tmp_path / "r.json")
    assert (tmp_path / "r.csv").read_text() == panel.report.to_csv()
    assert json.loads((tmp_path / "r.json").read_text()) == panel.report.as_dict()
    with pytest.raises(ValueError, match=r"\.csv or \.json"):
        panel.save_results(tmp_path / "r.txt")


def test_a_script_runs_the_sweep_the_controls_describe_then_the_one_the_plots_show(panel, qtbot, tmp_path):
    panel.form.lengths_edit.setText("32 48")
    assert "lengths=(32, 48)" in panel.script(0) and "heads=2, head_dim=16" in panel.script(0)
    run_sweep(panel, qtbot, "64 128", ("numpy-naive",))
    panel.form.lengths_edit.setText("32")  # after the sweep: the plots still show 64 and 128
    path = tmp_path / "memory.py"
    path.write_text(panel.script(3), encoding="utf-8")
    (run,) = run_scripts([path])
    assert run.returncode == 0, run.stderr
    assert "numpy-naive, n = 64: ok" in run.stdout and "numpy-naive, n = 128: ok" in run.stdout
    assert "n = 32" not in run.stdout


def test_steps_show_the_matching_plot(panel):
    assert panel.table.columnCount() == len(COLUMNS)
    for step, page in ((0, 0), (1, 0), (2, 1), (3, 2)):
        panel.set_step(step)
        assert panel.pages.currentIndex() == page
    panel.step_bar.setCurrentIndex(2)  # the step bar's tabs pick the plot
    assert panel.step == 2 and panel.pages.currentWidget() is panel.plot_pages["tflops"]


def test_worker_reports_the_end_of_a_task_that_ends_at_once(qtbot):
    ended = []
    for _ in range(20):  # a task this short often ends before run_task returns
        worker.run_task(int, on_finished=lambda: ended.append(True))
    idle(10)
    assert len(ended) == 20


def test_worker_names_the_tasks_still_running(qtbot):
    release = threading.Event()
    worker.run_task(release.wait)
    assert worker.running() == ["Event.wait"]
    release.set()
    idle(10)
    assert worker.running() == []


def test_without_torch_the_numpy_implementations_still_run(qtbot, monkeypatch):
    monkeypatch.setitem(sys.modules, "torch", None)  # makes `import torch` fail
    p = BenchPanel()
    qtbot.addWidget(p)
    p.show()
    qtbot.waitUntil(lambda: p.form.choices is not None, timeout=patience_ms(60))
    assert "torch is not installed" in p.message.text() and p.message.level == "info"
    assert p.form.selected_impls() == ("numpy-naive",)
    p.form.repeats_spin.setValue(3)
    run_sweep(p, qtbot, "64", ("numpy-naive", "numpy-tiled"))
    assert [r.status for r in p.results] == [
        "ok",
        "not available: core.maths.flash computes in float64 only; choose fp64",
    ]


def test_a_noisy_point_withholds_the_legends_slope():
    from app.panels.bench.state import SweepState, legend_text, summarise
    from core.bench.sweep import BenchResult

    def point(n: int, seconds: float, spread: float) -> BenchResult:
        return BenchResult("numpy-naive", "cpu", "float32", n, 1, 1, 64, False, seconds, 1.0, 4 * n * n,
                           0.0, "ok", repeats=5, spread=spread)  # fmt: skip

    settled = (point(128, 0.001, 0.05), point(256, 0.004, 0.05), point(512, 0.016, 0.05))
    assert legend_text(summarise(SweepState(("numpy-naive",), settled)), "median_s", "numpy-naive") == (
        "numpy-naive  slope 2.00"
    )
    disturbed = (point(128, 0.48, 2.0), *settled[1:])  # a warm-up outlier, as on a busy machine
    text = legend_text(summarise(SweepState(("numpy-naive",), disturbed)), "median_s", "numpy-naive")
    assert text == "numpy-naive  (no slope: a point's timing is noise; run it again)"
    once = (*settled[:2], point(512, 0.016, None))  # Repeats 1: the spread is unknown
    text = legend_text(summarise(SweepState(("numpy-naive",), once)), "median_s", "numpy-naive")
    assert text == "numpy-naive  (no slope: a point was timed once; set Repeats to 2 or more)"
