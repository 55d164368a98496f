"""Panel "Benchmark": attention measured on this computer's CPU (and GPU), point by point.

The sweep is one background Live (``state.py``): Run hands it the configuration the side column
describes, ``core.bench.sweep.run_benchmark`` runs in the worker, and each finished point lands as
a partial result that the table and the plot of the step on screen follow. What the device offers
is a second Live, looked up in the worker (it imports torch) when the panel is first shown.
"""

from __future__ import annotations

from pathlib import Path

from PySide6.QtWidgets import QFileDialog, QHBoxLayout, QTableWidgetItem, QVBoxLayout, QWidget

from app import worker
from app.panels.base import Panel
from app.panels.bench import scripts
from app.panels.bench.controls import SweepForm
from app.panels.bench.state import (
    COLUMNS,
    PLOTS,
    BenchRun,
    BenchState,
    ProbeState,
    compute_bench,
    compute_probe,
    row_texts,
)
from app.panels.bench.sweep_plot import SweepPlotPage
from app.panels.scripts import Script
from app.panels.step import Live
from app.widgets.tables import text_table
from app.widgets.text import note
from core.bench.device import describe_device
from core.bench.sweep import BenchReport, BenchResult
from core.models.advice import models_advice


class BenchPanel(Panel):
    steps = ("What runs", "Time", "Throughput", "Memory")

    def __init__(self, parent=None):
        super().__init__(parent)
        self.form = SweepForm(run=self.run, cancel=self.cancel, export=self._ask_export)
        self.devices = Live(ProbeState(), compute_probe, background=True, start=False)
        self.live = Live(BenchState(), compute_bench, background=True)  # no sweep yet
        self.plot_pages = {
            field: SweepPlotPage(self.live, name, field, label, unit) for name, field, label, unit, _ in PLOTS
        }
        self.curves = {field: page.curves for field, page in self.plot_pages.items()}
        self.legends = {field: page.legend for field, page in self.plot_pages.items()}
        self.table = text_table(COLUMNS, row_labels=False, size_columns=True)
        self.tabled: tuple[BenchResult, ...] = ()  # the results the table shows
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
        self.devices.changed.connect(self._on_probe)
        self.devices.failed.connect(self._on_probe_error)
        self.live.changed.connect(self._show_run)
        self.live.progressed.connect(self._on_progress)
        self.live.busy.connect(self.form.running)
        self.set_step(0)

    @property
    def results(self) -> list[BenchResult]:
        return [] if self.live.result is None else list(self.live.result.results)

    @property
    def report(self) -> BenchReport | None:
        """The whole sweep once it has finished."""
        return None if self.live.result is None else self.live.result.report

    @property
    def config(self):
        """The configuration of the sweep on screen (or running), None before the first Run."""
        return self.live.wanted.config

    # --- which implementations exist (found in the worker: it imports torch) ------------------
    def showEvent(self, event) -> None:
        super().showEvent(event)
        if self.devices.result is None and self.devices.task is None:
            self.devices.apply()

    def _on_probe(self) -> None:
        self.form.offer(*self.devices.result)
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
        if self.live.task is not None:
            return
        try:
            config = self.form.config()
        except ValueError as exc:
            self.show_message(str(exc))
            return
        self.clear_message()
        self.form.progress.setRange(0, len(config.points()))
        self.live.apply(config=config)
        self._on_progress(0, len(config.points()))

    def cancel(self) -> None:
        """Stop the sweep: the points measured so far stay."""
        config = self.config  # the sweep running (the state goes back to the one on screen)
        if self.live.cancel():
            total, ran = len(config.points()), len(self.results)
            self.form.progress.setFormat(f"cancelled: {ran} of {total} points ran")
            self.show_message(f"Cancelled after {ran} of {total} points.", "info")

    def _on_progress(self, done: int, total: int) -> None:
        progress = self.form.progress
        progress.setValue(done)
        if done < total:
            n, key = self.config.points()[done]
            progress.setFormat(f"point {done + 1} of {total}: {key}, n = {n}")
        else:
            progress.setFormat(f"{total} points done")

    def _show_run(self) -> None:
        """The table and summary of the sweep so far (the plots are its steps); the device's name
        once the sweep is whole."""
        r: BenchRun | None = self.live.result
        if r is None:
            return
        if r.results[: len(self.tabled)] != self.tabled:  # another sweep: its rows only
            self.table.setRowCount(0)
            self.tabled = ()
        for result in r.results[len(self.tabled) :]:
            row = self.table.rowCount()
            self.table.insertRow(row)
            for column, text in enumerate(row_texts(result)):
                self.table.setItem(row, column, QTableWidgetItem(text))
            if not result.ok:
                self.table.item(row, len(COLUMNS) - 1).setToolTip(result.status)
        self.tabled = r.results
        self.table.scrollToBottom()
        self.summary.setText(r.summary.summary)
        self.form.export_button.setEnabled(bool(r.results))
        if r.report is not None:
            d = r.report.device
            peak = f", peak {d.peak_tflops:g} TFLOP/s in {d.dtype}" if d.peak_tflops else ""
            self.form.device_label.setText(f"{d.name}{peak}")

    # --- export -----------------------------------------------------------------------------
    def current_report(self) -> BenchReport:
        """The finished sweep, or what a cancelled one measured before it stopped."""
        if self.report is not None:
            return self.report
        config = self.live.state.config
        if config is None:
            raise ValueError("Run a sweep first; there is nothing to export yet.")
        device = describe_device(config.device, config.dtype)
        return BenchReport(device, config, tuple(self.results))

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
        config = self.live.state.config or self.form.config()
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
        self.form.lengths_edit.setText("512 1024")
        self.run()  # while one runs: waits
        worker.settle()
        super().exercise()

    def export(self) -> dict[str, QWidget]:
        return {**super().export(), "table": self.table}  # the table sits under every step
