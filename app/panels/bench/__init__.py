"""Panel "Benchmark": attention measured on this computer's CPU (and GPU), point by point.

The sweep is ``core.bench.sweep.run_benchmark`` in the app's background worker; each finished point
arrives through a queued signal, joins the sweep's state (``state.py``), and the table and the plot
of the step on screen follow. torch is imported only in the worker, when the panel is first shown.
"""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import Signal
from PySide6.QtWidgets import QFileDialog, QHBoxLayout, QTableWidgetItem, QVBoxLayout, QWidget

from app import worker
from app.panels.base import Panel
from app.panels.bench import scripts
from app.panels.bench.controls import SweepForm
from app.panels.bench.state import COLUMNS, PLOTS, SweepState, probe, row_texts, summarise
from app.panels.bench.sweep_plot import SweepPlotPage
from app.panels.scripts import Script
from app.panels.step import Live
from app.widgets.tables import text_table
from app.widgets.text import note
from core.bench.device import describe_device
from core.bench.sweep import BenchConfig, BenchReport, BenchResult, run_benchmark
from core.models.advice import models_advice


class BenchPanel(Panel):
    steps = ("What runs", "Time", "Throughput", "Memory")

    resultArrived = Signal(object)  # a BenchResult, emitted from the worker thread

    def __init__(self, parent=None):
        super().__init__(parent)
        self.form = SweepForm(run=self.run, cancel=self.cancel, export=self._ask_export)
        self.probe_task: worker.Task | None = None
        self.task: worker.Task | None = None
        self.config: BenchConfig | None = None
        self.report: BenchReport | None = None
        self.sweep = Live(SweepState(), summarise)
        self.plot_pages = {
            field: SweepPlotPage(self.sweep, name, field, label, unit)
            for name, field, label, unit, _ in PLOTS
        }
        self.curves = {field: page.curves for field, page in self.plot_pages.items()}
        self.legends = {field: page.legend for field, page in self.plot_pages.items()}
        self.table = text_table(COLUMNS, row_labels=False, size_columns=True)
        self.summary = note("Run a sweep to fill the table and the plots.")
        row = QHBoxLayout()
        row.addWidget(self.form.column)
        self.body.addLayout(row, 3)
        time, throughput, memory = self.plot_pages.values()
        self.add_steps(time, time, throughput, memory, into=row)  # "What runs" shows the time plot
        # The results under both, across the panel: its seven columns need the width.
        lower = QWidget()
        lower_layout = QVBoxLayout(lower)
        lower_layout.setContentsMargins(0, 0, 0, 0)
        lower_layout.addWidget(self.summary)
        lower_layout.addWidget(self.table, 1)
        self.body.addWidget(lower, 2)
        self.resultArrived.connect(self._add_result)
        self.set_step(0)

    @property
    def results(self) -> list[BenchResult]:
        return list(self.sweep.state.results)

    # --- which implementations exist (found in the worker: it imports torch) ------------------
    def showEvent(self, event) -> None:
        super().showEvent(event)
        if self.form.choices is None and self.probe_task is None:
            self.probe_task = worker.run_task(probe, on_result=self._on_probe, on_error=self._on_probe_error)

    def _on_probe(self, found) -> None:
        self.form.offer(*found)
        without_torch = self.form.choices["cpu"]["torch-naive"]
        if without_torch is not None:
            self.show_message(
                f"Only the numpy implementations can run here: {without_torch}. {models_advice()}",
                "info",
            )

    def _on_probe_error(self, text: str) -> None:
        self.form.device_label.setText("Could not look for torch.")
        self.show_message(text)

    # --- a sweep ----------------------------------------------------------------------------
    def run(self) -> None:
        """Start a sweep of what the controls describe; bad settings are refused with a message."""
        if self.form.choices is None:
            self.show_message("Still looking for torch and a GPU; try again in a moment.", "info")
            return
        if self.task is not None:
            return
        try:
            config = self.form.config()
        except ValueError as exc:
            self.show_message(str(exc))
            return
        self.clear_message()
        self.config, self.report = config, None
        self.table.setRowCount(0)
        self.sweep.apply(impls=config.impls, results=())
        total = len(config.points())
        self.form.progress.setRange(0, total)
        self._on_progress(0, total)
        self.form.running(True)
        self.task = worker.run_task(
            run_benchmark,
            config,
            on_point=self.resultArrived.emit,
            on_result=self._on_report,
            on_error=self.show_message,
            on_progress=self._on_progress,
            on_finished=self._on_finished,
        )

    def cancel(self) -> None:
        if self.task is not None:
            self.task.cancel()
            self.form.progress.setFormat("cancelling after the current call…")

    def _on_progress(self, done: int, total: int) -> None:
        progress = self.form.progress
        progress.setValue(done)
        if done < total:
            n, key = self.config.points()[done]
            progress.setFormat(f"point {done + 1} of {total}: {key}, n = {n}")
        else:
            progress.setFormat(f"{total} points done")

    def _add_result(self, r: BenchResult) -> None:
        row = self.table.rowCount()
        self.table.insertRow(row)
        for column, text in enumerate(row_texts(r)):
            self.table.setItem(row, column, QTableWidgetItem(text))
        if not r.ok:
            self.table.item(row, len(COLUMNS) - 1).setToolTip(r.status)
        self.table.scrollToBottom()
        self.sweep.apply(results=(*self.sweep.state.results, r))
        self.summary.setText(self.sweep.result.summary)
        self.form.export_button.setEnabled(True)

    def _on_report(self, report: BenchReport) -> None:
        self.report = report
        d = report.device
        peak = f", peak {d.peak_tflops:g} TFLOP/s in {d.dtype}" if d.peak_tflops else ""
        self.form.device_label.setText(f"{d.name}{peak}")

    def _on_finished(self) -> None:
        cancelled = self.task is not None and self.task.cancelled
        self.task = None
        self.form.running(False)
        if cancelled:
            total, ran = len(self.config.points()), len(self.results)
            self.form.progress.setFormat(f"cancelled: {ran} of {total} points ran")
            self.show_message(f"Cancelled after {ran} of {total} points.", "info")

    # --- export -----------------------------------------------------------------------------
    def current_report(self) -> BenchReport:
        """The finished sweep, or what a cancelled one measured before it stopped."""
        if self.report is not None:
            return self.report
        if self.config is None:
            raise ValueError("Run a sweep first; there is nothing to export yet.")
        device = describe_device(self.config.device, self.config.dtype)
        return BenchReport(device, self.config, tuple(self.results))

    def save_results(self, path: str | Path) -> None:
        """Write the results as CSV or JSON, by the file's suffix."""
        path = Path(path)
        if path.suffix.lower() not in (".csv", ".json"):
            raise ValueError(f"Export to a .csv or .json file, not {path.name!r}.")
        report = self.current_report()
        path.write_text(
            report.to_csv() if path.suffix.lower() == ".csv" else report.to_json(), encoding="utf-8"
        )

    def _ask_export(self) -> None:
        path, _ = QFileDialog.getSaveFileName(
            self, "Export benchmark results", "attention-benchmark.csv", "CSV (*.csv);;JSON (*.json)"
        )
        if not path:
            return
        try:
            self.save_results(path)
        except (ValueError, OSError) as exc:
            self.show_message(str(exc))
        else:
            self.show_message(f"Saved {path}.", "info")

    def step_script(self, i: int) -> Script:
        """Every step runs the sweep again: the one the plots show, else the one the controls describe."""
        config = self.config or self.form.config()
        return scripts.what_runs(config) if i == 0 else scripts.plot_step(config, self.step_pages[i].field)

    # --- smoke, export ------------------------------------------------------------------------------
    def exercise(self) -> None:
        worker.settle()  # the probe started when the panel was shown
        f = self.form
        f.lengths_edit.setText("0, abc")
        self.run()
        f.lengths_edit.setText("512:2048")
        f.heads_spin.setValue(2)
        f.repeats_spin.setValue(3)
        f.select_impls(("numpy-naive", "torch-naive", "sdpa-math", "sdpa-flash"))
        self.run()
        self.cancel()
        worker.settle()
        self.run()
        worker.settle()
        super().exercise()

    def export(self) -> dict[str, QWidget]:
        return {**super().export(), "table": self.table}  # the table sits under every step
