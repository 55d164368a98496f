"""Panel "Benchmark": attention measured on this computer's CPU (and GPU), point by point.

The sweep is ``core.bench.run_benchmark`` in the app's background worker; each finished point
arrives through a queued signal and updates the table and the existing plot curves. torch is
imported only in the worker, when the panel is first shown.
"""

from __future__ import annotations

from pathlib import Path

import pyqtgraph as pg
from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QAbstractItemView,
    QCheckBox,
    QComboBox,
    QFileDialog,
    QFormLayout,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QLineEdit,
    QListWidget,
    QListWidgetItem,
    QProgressBar,
    QPushButton,
    QSpinBox,
    QSplitter,
    QTableWidget,
    QTableWidgetItem,
    QTabWidget,
    QVBoxLayout,
    QWidget,
)

from app import worker
from app.panels.base import Panel
from app.theme import style_plots
from core import inputs
from core.bench import (
    DTYPES,
    BenchConfig,
    BenchReport,
    BenchResult,
    fastest_summary,
    fit_slopes,
    implementation_choices,
    run_benchmark,
)
from core.bench_device import describe_device
from core.bench_runners import IMPLEMENTATIONS

# ticked when a device is chosen (where the device has them)
DEFAULT_IMPLS = ("numpy-naive", "torch-naive", "sdpa-math", "sdpa-flash", "sdpa-efficient", "sdpa-cudnn")
COLUMNS = ("implementation", "n", "median ms", "TFLOP/s", "peak MB", "max error", "status")
SYMBOLS = ("o", "s", "t", "d", "+", "x", "star", "h")
# (name, BenchResult field, axis label, unit, slope shown in the legend)
PLOTS = (
    ("Time", "median_s", "median time", "s", True),
    ("Throughput", "tflops", "achieved TFLOP/s", "", False),
    ("Memory", "peak_bytes", "peak memory beyond the inputs", "B", True),
)


def probe() -> tuple[dict[str, dict[str, str | None]], dict[str, str]]:
    """Which implementations each device has (or why not), and a one-line description per device."""
    choices = implementation_choices()
    names = {}
    for device in choices:
        info = describe_device(device, "fp32")
        memory = f", {info.memory_bytes / 2**30:.0f} GiB" if info.memory_bytes else ""
        names[device] = f"{info.name}{memory}"
    return choices, names


def row_texts(r: BenchResult) -> list[str]:
    """The table cells of one result, in COLUMNS order."""
    if not r.ok:
        return [r.impl, str(r.n), "", "", "", "", r.status]
    peak = f"{r.peak_bytes / 1e6:.1f}" if r.peak_bytes is not None else "?"
    status = "ok" if r.tflops_pct is None else f"ok, {r.tflops_pct:.0f}% of peak"
    if r.compile_s is not None:
        status += f", first call {r.compile_s:.1f} s"
    return [
        r.impl,
        str(r.n),
        f"{r.median_s * 1e3:.3f}",
        f"{r.tflops:.3g}",
        peak,
        f"{r.max_abs_error:.1e}",
        status,
    ]


class BenchPanel(Panel):
    key = "bench"
    title = "Benchmark"
    steps = ("What runs", "Time", "Throughput", "Memory")

    resultArrived = Signal(object)  # a BenchResult, emitted from the worker thread

    def __init__(self, parent=None):
        super().__init__(parent)
        self.choices: dict[str, dict[str, str | None]] | None = None
        self.device_names: dict[str, str] = {}
        self.probe_task: worker.Task | None = None
        self.task: worker.Task | None = None
        self.config: BenchConfig | None = None
        self.results: list[BenchResult] = []
        self.report: BenchReport | None = None
        self._build()
        self.resultArrived.connect(self._add_result)
        self.set_step(0)

    # --- layout -----------------------------------------------------------------------------
    def _build(self) -> None:
        self.device_combo = QComboBox()
        self.device_combo.addItem("cpu")
        self.device_label = QLabel("Looking for torch and a GPU…")
        self.device_label.setWordWrap(True)
        self.impl_list = QListWidget()
        for key, impl in IMPLEMENTATIONS.items():
            item = QListWidgetItem(impl.label)
            item.setData(Qt.ItemDataRole.UserRole, key)
            item.setFlags(Qt.ItemFlag.ItemIsUserCheckable)  # enabled once the probe says so
            item.setCheckState(Qt.CheckState.Checked if key in DEFAULT_IMPLS else Qt.CheckState.Unchecked)
            self.impl_list.addItem(item)
        self.impl_list.setMaximumHeight(self.impl_list.sizeHintForRow(0) * (len(IMPLEMENTATIONS) + 1))
        self.lengths_edit = QLineEdit("256 512 1024 2048")
        self.lengths_edit.setToolTip(
            "Sequence lengths: a list such as 256 512 1024, or 128:4096 for doubling"
        )
        self.dtype_combo = QComboBox()
        self.dtype_combo.addItems(DTYPES)
        self.causal_check = QCheckBox("causal (each token sees only earlier ones)")
        self.batch_spin = self._spin(1, 1, 64)
        self.heads_spin = self._spin(8, 1, 128)
        self.head_dim_spin = self._spin(64, 8, 256)
        self.window_spin = self._spin(256, 1, 65536)
        self.repeats_spin = self._spin(10, 1, 100)
        self.run_button = QPushButton("Run")
        self.run_button.setEnabled(False)
        self.cancel_button = QPushButton("Cancel")
        self.cancel_button.setEnabled(False)
        self.export_button = QPushButton("Export…")
        self.export_button.setEnabled(False)
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
        form.addRow("Batch", self.batch_spin)
        form.addRow("Heads", self.heads_spin)
        form.addRow("Head dim", self.head_dim_spin)
        form.addRow("Window", self.window_spin)
        form.addRow("Repeats", self.repeats_spin)
        buttons = QHBoxLayout()
        for button in (self.run_button, self.cancel_button, self.export_button):
            buttons.addWidget(button)
        form.addRow(buttons)
        form.addRow(self.progress)
        left = QWidget()
        left_layout = QVBoxLayout(left)
        left_layout.setContentsMargins(0, 0, 0, 0)
        left_layout.addLayout(form)
        left_layout.addStretch(1)
        left.setMaximumWidth(340)

        self.tabs = QTabWidget()
        self.plots: dict[str, pg.PlotWidget] = {}
        self.curves: dict[str, dict[str, pg.PlotDataItem]] = {}
        self.legends: dict[str, pg.LegendItem] = {}
        for name, field, label, unit, _ in PLOTS:
            plot = pg.PlotWidget()
            plot.setLogMode(x=True, y=True)
            plot.showGrid(x=True, y=True, alpha=0.25)
            plot.setLabel("bottom", "sequence length n")
            plot.setLabel("left", label, units=unit or None)
            plot.getAxis("left").enableAutoSIPrefix(bool(unit))  # TFLOP/s stays in TFLOP/s
            self.legends[field] = plot.addLegend(offset=(10, 10))
            self.curves[field] = {}
            for i, key in enumerate(IMPLEMENTATIONS):
                color = pg.intColor(i, hues=len(IMPLEMENTATIONS), values=1, maxValue=220)
                self.curves[field][key] = plot.plot(
                    [], [], pen=pg.mkPen(color, width=2), symbol=SYMBOLS[i], symbolBrush=color, symbolSize=7
                )
            self.plots[field] = plot
            self.tabs.addTab(plot, name)
        self.table = QTableWidget(0, len(COLUMNS))
        self.table.setHorizontalHeaderLabels(COLUMNS)
        self.table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.table.verticalHeader().setVisible(False)
        self.table.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
        self.table.horizontalHeader().setStretchLastSection(True)
        self.summary = QLabel("Run a sweep to fill the table and the plots.")
        self.summary.setWordWrap(True)
        lower = QWidget()
        lower_layout = QVBoxLayout(lower)
        lower_layout.setContentsMargins(0, 0, 0, 0)
        lower_layout.addWidget(self.summary)
        lower_layout.addWidget(self.table, 1)
        right = QSplitter(Qt.Orientation.Vertical)
        right.addWidget(self.tabs)
        right.addWidget(lower)
        right.setStretchFactor(0, 3)
        right.setStretchFactor(1, 2)

        row = QHBoxLayout()
        row.addWidget(left)
        row.addWidget(right, 1)
        self.body.addLayout(row)

        self.device_combo.currentTextChanged.connect(self._on_device)
        self.run_button.clicked.connect(self.run)
        self.cancel_button.clicked.connect(self.cancel)
        self.export_button.clicked.connect(self._ask_export)
        self.tabs.currentChanged.connect(self._on_tab)

    def _on_tab(self, i: int) -> None:
        if i != self.tabs_for_step(self.step):
            self.set_step(i + 1)

    @staticmethod
    def tabs_for_step(step: int) -> int:
        """The plot tab of a lecture step: the first step (what runs) shows the time plot."""
        return max(0, step - 1)

    @staticmethod
    def _spin(value: int, low: int, high: int) -> QSpinBox:
        spin = QSpinBox()
        spin.setRange(low, high)
        spin.setValue(value)
        return spin

    # --- which implementations exist (found in the worker: it imports torch) ------------------
    def showEvent(self, event) -> None:
        super().showEvent(event)
        if self.choices is None and self.probe_task is None:
            self.probe_task = worker.run_task(probe, on_result=self._on_probe, on_error=self._on_probe_error)

    def _on_probe(self, found) -> None:
        self.choices, self.device_names = found
        self.device_combo.blockSignals(True)
        self.device_combo.clear()
        self.device_combo.addItems(list(self.choices))
        self.device_combo.blockSignals(False)
        self._on_device(self.device_combo.currentText())
        self.run_button.setEnabled(True)
        without_torch = self.choices["cpu"]["torch-naive"]
        if without_torch is not None:
            self.show_message(
                f"Only the numpy implementations can run here: {without_torch}. "
                "Install it with: pip install 'attention-lab[models]'.",
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
        self.config, self.results, self.report = config, [], None
        self.table.setRowCount(0)
        for field, curves in self.curves.items():
            self.legends[field].clear()
            for key, curve in curves.items():
                curve.setData([], [])
                if key in config.impls:
                    self.legends[field].addItem(curve, key)
        style_plots(self)  # the new legend labels take the theme's text colour
        self.summary.setText("")
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
        self.results.append(r)
        row = self.table.rowCount()
        self.table.insertRow(row)
        for column, text in enumerate(row_texts(r)):
            item = QTableWidgetItem(text)
            if r.status != "ok" and column == len(COLUMNS) - 1:
                item.setToolTip(r.status)
            self.table.setItem(row, column, item)
        self.table.scrollToBottom()
        mine = sorted((x for x in self.results if x.impl == r.impl and x.ok), key=lambda x: x.n)
        for _, field, _, _, with_slope in PLOTS:
            points = [(x.n, getattr(x, field)) for x in mine if getattr(x, field)]  # log axes: > 0 only
            self.curves[field][r.impl].setData([p[0] for p in points], [p[1] for p in points])
            if with_slope:
                slope = fit_slopes(self.results, field).get(r.impl)
                label = self.legends[field].getLabel(self.curves[field][r.impl])
                if label is not None:
                    label.setText(r.impl if slope is None else f"{r.impl}  slope {slope:.2f}")
        self.summary.setText(fastest_summary(self.results))
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
            total = len(self.config.points())
            self.progress.setFormat(f"cancelled: {len(self.results)} of {total} points ran")
            self.show_message(f"Cancelled after {len(self.results)} of {total} points.", "info")

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

    # --- lecture steps, smoke, export -------------------------------------------------------------
    def show_step(self, i: int) -> None:
        self.tabs.setCurrentIndex(self.tabs_for_step(i))
        if i == 0:
            self.impl_list.setFocus()

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
        return {**{name.lower(): self.plots[field] for name, field, *_ in PLOTS}, "table": self.table}
