"""Panel "Benchmark": attention measured on this computer's CPU (and GPU), point by point.

The sweep is ``core.bench.run_benchmark`` in the app's background worker; each finished point
arrives through a queued signal, joins the sweep's state (``state.py``), and the table and the plot
of the step on screen follow. torch is imported only in the worker, when the panel is first shown.
"""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QFileDialog,
    QFormLayout,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QListWidget,
    QListWidgetItem,
    QProgressBar,
    QPushButton,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from app import worker
from app.panels.base import Panel
from app.panels.bench import scripts
from app.panels.bench.state import COLUMNS, PLOTS, SweepState, probe, row_texts, summarise
from app.panels.bench.sweep_plot import SweepPlotPage
from app.panels.binding import set_quietly
from app.panels.scripts import Script
from app.panels.step import Live
from app.widgets.side_column import side_column
from app.widgets.sizing import WholeItems
from app.widgets.spin_boxes import spin
from app.widgets.tables import text_table
from app.widgets.text import note
from core import inputs
from core.bench import DTYPES, BenchConfig, BenchReport, BenchResult, run_benchmark
from core.bench_device import describe_device
from core.bench_runners import IMPLEMENTATIONS
from core.install_advice import models_advice

# ticked when a device is chosen (where the device has them)
DEFAULT_IMPLS = ("numpy-naive", "torch-naive", "sdpa-math", "sdpa-flash", "sdpa-efficient", "sdpa-cudnn")


class BenchPanel(Panel):
    steps = ("What runs", "Time", "Throughput", "Memory")

    resultArrived = Signal(object)  # a BenchResult, emitted from the worker thread

    def __init__(self, parent=None):
        super().__init__(parent)
        self.choices: dict[str, dict[str, str | None]] | None = None
        self.device_names: dict[str, str] = {}
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
        row.addWidget(self._controls())
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

    def _controls(self) -> QWidget:
        self.device_combo = QComboBox()
        self.device_combo.addItem("cpu")
        self.device_combo.currentTextChanged.connect(self._on_device)
        self.device_label = note("Looking for torch and a GPU…")
        self.impl_list = QListWidget()
        for key, impl in IMPLEMENTATIONS.items():
            item = QListWidgetItem(impl.label)
            item.setData(Qt.ItemDataRole.UserRole, key)
            item.setFlags(Qt.ItemFlag.ItemIsUserCheckable)  # enabled once the probe says so
            item.setCheckState(Qt.CheckState.Checked if key in DEFAULT_IMPLS else Qt.CheckState.Unchecked)
            self.impl_list.addItem(item)
        WholeItems(self.impl_list)
        self.lengths_edit = QLineEdit("256 512 1024 2048")
        self.lengths_edit.setToolTip(
            "Sequence lengths: a list such as 256 512 1024, or 128:4096 for doubling"
        )
        self.dtype_combo = QComboBox()
        self.dtype_combo.addItems(DTYPES)
        self.causal_check = QCheckBox("causal")
        self.causal_check.setToolTip("A causal mask: each token sees only itself and earlier ones")
        self.batch_spin = spin(1, 1, 64, tracking=True)
        self.heads_spin = spin(8, 1, 128, tracking=True)
        self.head_dim_spin = spin(64, 8, 256, tracking=True)
        self.window_spin = spin(256, 1, 65536, tracking=True)
        self.repeats_spin = spin(10, 1, 100, tracking=True)
        self.run_button = QPushButton("Run")
        self.run_button.setEnabled(False)
        self.run_button.clicked.connect(self.run)
        self.cancel_button = QPushButton("Cancel")
        self.cancel_button.setEnabled(False)
        self.cancel_button.clicked.connect(self.cancel)
        self.export_button = QPushButton("Export…")
        self.export_button.setEnabled(False)
        self.export_button.clicked.connect(self._ask_export)
        self.progress = QProgressBar()
        self.progress.setFormat("idle")
        self.progress.setValue(0)
        form = QFormLayout()
        form.addRow("Device", self.device_combo)
        form.addRow(self.device_label)
        form.addRow(QLabel("Implementations"))
        form.addRow(self.impl_list)
        form.addRow("Lengths n", self.lengths_edit)
        form.addRow("dtype", self.dtype_combo)
        form.addRow(self.causal_check)
        for name, box in (
            ("Batch", self.batch_spin),
            ("Heads", self.heads_spin),
            ("Head dim", self.head_dim_spin),
            ("Window", self.window_spin),
            ("Repeats", self.repeats_spin),
        ):
            form.addRow(name, box)
        buttons = QHBoxLayout()
        for button in (self.run_button, self.cancel_button, self.export_button):
            buttons.addWidget(button)
        form.addRow(buttons)
        form.addRow(self.progress)
        column = QVBoxLayout()
        column.setContentsMargins(0, 0, 0, 0)
        column.addLayout(form)
        column.addStretch(1)
        return side_column(column)

    @property
    def results(self) -> list[BenchResult]:
        return list(self.sweep.state.results)

    # --- which implementations exist (found in the worker: it imports torch) ------------------
    def showEvent(self, event) -> None:
        super().showEvent(event)
        if self.choices is None and self.probe_task is None:
            self.probe_task = worker.run_task(probe, on_result=self._on_probe, on_error=self._on_probe_error)

    def _on_probe(self, found) -> None:
        self.choices, self.device_names = found
        set_quietly(self.device_combo, next(iter(self.choices)), choices=list(self.choices))
        self._on_device(self.device_combo.currentText())
        self.run_button.setEnabled(True)
        without_torch = self.choices["cpu"]["torch-naive"]
        if without_torch is not None:
            self.show_message(
                f"Only the numpy implementations can run here: {without_torch}. {models_advice()}",
                "info",
            )

    def _on_probe_error(self, text: str) -> None:
        self.device_label.setText("Could not look for torch.")
        self.show_message(text)

    def _on_device(self, device: str) -> None:
        if self.choices is None or device not in self.choices:
            return
        self.device_label.setText(self.device_names.get(device, device))
        self.dtype_combo.setCurrentText("bf16" if device == "cuda" else "fp32")
        for row in range(self.impl_list.count()):
            item = self.impl_list.item(row)
            reason = self.choices[device][item.data(Qt.ItemDataRole.UserRole)]
            flags = Qt.ItemFlag.ItemIsUserCheckable
            item.setFlags(flags | Qt.ItemFlag.ItemIsEnabled if reason is None else flags)
            item.setToolTip("" if reason is None else f"Not available: {reason}")
        self.select_impls(key for key in DEFAULT_IMPLS if self.choices[device][key] is None)

    def selected_impls(self) -> tuple[str, ...]:
        items = (self.impl_list.item(row) for row in range(self.impl_list.count()))
        return tuple(
            item.data(Qt.ItemDataRole.UserRole)
            for item in items
            if item.checkState() == Qt.CheckState.Checked and item.flags() & Qt.ItemFlag.ItemIsEnabled
        )

    def select_impls(self, keys) -> None:
        keys = set(keys)
        for row in range(self.impl_list.count()):
            item = self.impl_list.item(row)
            on = item.data(Qt.ItemDataRole.UserRole) in keys
            item.setCheckState(Qt.CheckState.Checked if on else Qt.CheckState.Unchecked)

    # --- a sweep ----------------------------------------------------------------------------
    def current_config(self) -> BenchConfig:
        """The sweep the controls describe; ValueError with a readable message if they are bad."""
        return BenchConfig(
            lengths=inputs.lengths(self.lengths_edit.text()),
            impls=self.selected_impls(),
            batch=self.batch_spin.value(),
            heads=self.heads_spin.value(),
            head_dim=self.head_dim_spin.value(),
            dtype=self.dtype_combo.currentText(),
            causal=self.causal_check.isChecked(),
            device=self.device_combo.currentText(),
            window=self.window_spin.value(),
            repeats=self.repeats_spin.value(),
        )

    def run(self) -> None:
        """Start a sweep of what the controls describe; bad settings are refused with a message."""
        if self.choices is None:
            self.show_message("Still looking for torch and a GPU; try again in a moment.", "info")
            return
        if self.task is not None:
            return
        try:
            config = self.current_config()
        except ValueError as exc:
            self.show_message(str(exc))
            return
        self.clear_message()
        self.config, self.report = config, None
        self.table.setRowCount(0)
        self.sweep.apply(impls=config.impls, results=())
        total = len(config.points())
        self.progress.setRange(0, total)
        self._on_progress(0, total)
        self.run_button.setEnabled(False)
        self.cancel_button.setEnabled(True)
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
            self.progress.setFormat("cancelling after the current call…")

    def _on_progress(self, done: int, total: int) -> None:
        self.progress.setValue(done)
        if done < total:
            n, key = self.config.points()[done]
            self.progress.setFormat(f"point {done + 1} of {total}: {key}, n = {n}")
        else:
            self.progress.setFormat(f"{total} points done")

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
        self.export_button.setEnabled(True)

    def _on_report(self, report: BenchReport) -> None:
        self.report = report
        d = report.device
        peak = f", peak {d.peak_tflops:g} TFLOP/s in {d.dtype}" if d.peak_tflops else ""
        self.device_label.setText(f"{d.name}{peak}")

    def _on_finished(self) -> None:
        cancelled = self.task is not None and self.task.cancelled
        self.task = None
        self.run_button.setEnabled(True)
        self.cancel_button.setEnabled(False)
        if cancelled:
            total, ran = len(self.config.points()), len(self.results)
            self.progress.setFormat(f"cancelled: {ran} of {total} points ran")
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
        config = self.config or self.current_config()
        return scripts.what_runs(config) if i == 0 else scripts.plot_step(config, self.step_pages[i].field)

    # --- smoke, export ------------------------------------------------------------------------------
    def exercise(self) -> None:
        worker.wait_idle()  # the probe started when the panel was shown
        self.lengths_edit.setText("0, abc")
        self.run()
        self.lengths_edit.setText("512:2048")
        self.heads_spin.setValue(2)
        self.repeats_spin.setValue(3)
        self.select_impls(("numpy-naive", "torch-naive", "sdpa-math", "sdpa-flash"))
        self.run()
        self.cancel()
        worker.wait_idle()
        self.run()
        worker.wait_idle()
        super().exercise()

    def export(self) -> dict[str, QWidget]:
        plots = {name.lower(): self.plot_pages[field].plot for name, field, *_ in PLOTS}
        return {**plots, "table": self.table}
