"""The Benchmark panel's side column: device, implementations and the sweep's sizes.

A plain holder of the widgets (not a widget itself), so the panel's widget tree, and with it the
control paths that saved lessons use, is the column as built here.

    form = SweepForm(run=..., cancel=..., export=...)
    form.offer(choices, device_names)    # what the probe found: {device: {impl: reason or None}}
    form.config()                        # the BenchConfig the controls describe (ValueError if bad)
"""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QFormLayout,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QListWidget,
    QListWidgetItem,
    QProgressBar,
    QPushButton,
    QVBoxLayout,
)

from app.panels.binding import set_quietly
from app.widgets.side_column import side_column
from app.widgets.sizing import WholeItems
from app.widgets.spin_boxes import spin
from app.widgets.text import note
from core import inputs
from core.bench.runners import IMPLEMENTATIONS
from core.bench.sweep import DTYPES, BenchConfig

# ticked when a device is chosen (where the device has them)
DEFAULT_IMPLS = ("numpy-naive", "torch-naive", "sdpa-math", "sdpa-flash", "sdpa-efficient", "sdpa-cudnn")


class SweepForm:
    """The controls of a sweep and the buttons that start, stop and export it."""

    def __init__(self, run: Callable, cancel: Callable, export: Callable):
        self.choices: dict[str, dict[str, str | None]] | None = None  # per device: impl -> why not
        self.device_names: dict[str, str] = {}
        self.device_combo = QComboBox()
        self.device_combo.addItem("cpu")
        self.device_combo.currentTextChanged.connect(self.show_device)
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
        self.run_button = button("Run", run)
        self.cancel_button = button("Cancel", cancel)
        self.export_button = button("Export…", export)
        self.progress = QProgressBar()
        self.progress.setFormat("idle")
        self.progress.setValue(0)
        self.column = side_column(self._layout())

    def _layout(self) -> QVBoxLayout:
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
        for b in (self.run_button, self.cancel_button, self.export_button):
            buttons.addWidget(b)
        form.addRow(buttons)
        form.addRow(self.progress)
        column = QVBoxLayout()
        column.setContentsMargins(0, 0, 0, 0)
        column.addLayout(form)
        column.addStretch(1)
        return column

    def offer(self, choices: dict[str, dict[str, str | None]], device_names: dict[str, str]) -> None:
        """The devices and implementations the probe found runnable (the reason where not)."""
        self.choices, self.device_names = choices, device_names
        set_quietly(self.device_combo, next(iter(choices)), choices=list(choices))
        self.show_device(self.device_combo.currentText())
        self.run_button.setEnabled(True)

    def show_device(self, device: str) -> None:
        """Offer ``device``'s implementations, its usual dtype and its default choice."""
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

    def config(self) -> BenchConfig:
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

    def running(self, on: bool) -> None:
        """Run waits while a sweep runs; Cancel only then."""
        self.run_button.setEnabled(not on)
        self.cancel_button.setEnabled(on)


def button(text: str, slot: Callable) -> QPushButton:
    """A push button, disabled until there is something to do."""
    b = QPushButton(text)
    b.setEnabled(False)
    b.clicked.connect(slot)
    return b
