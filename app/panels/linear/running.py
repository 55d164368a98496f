"""Step 3: the running state: causal linear attention token by token, S_t and z_t, its output
read from them beside the parallel form; and what real decoders keep per token instead."""

from __future__ import annotations

import numpy as np
import pyqtgraph as pg
from PySide6.QtWidgets import QFormLayout, QVBoxLayout, QWidget

from app.panels.linear import scripts
from app.panels.linear.state import CACHE_LENGTHS, RunningResult, RunningState, cache_curves, compute_running
from app.panels.scripts import Script
from app.panels.step import Live, Notice, Step
from app.widgets import LabelledSlider, MatrixView
from app.widgets.plots import loglog_plot
from app.widgets.reflow_grid import side_by_side
from app.widgets.spin_boxes import spin
from app.widgets.tables import fill_table, text_table
from app.widgets.text import note
from core.maths.cache_size import CACHES
from core.printing import size_text

PALETTE = ("#d62728", "#3d7bd9", "#9467bd", "#8c564b", "#2ca02c", "#17becf", "#e07b00")


class RunningPage(Step):
    def __init__(self):
        super().__init__(Live(RunningState(), compute_running))
        s = self.state
        self.length_spin = self.bind(spin(s.length, 0, 64), "length")
        self.d_spin = self.bind(spin(s.d, 0, 16), "d")
        self.chunk_spin = self.bind(spin(s.chunk, 0, 64), "chunk")
        self.seed_spin = self.bind(spin(s.seed, 0, 2**31 - 1), "seed")
        self.token_slider = self.bind(LabelledSlider("Token t", 0, 63, s.token, integer=True), "token", int)
        self.context_spin = self.bind(spin(s.context, 0, 1 << 24, step=1024), "context")
        form = QFormLayout()
        form.addRow("Tokens T", self.length_spin)
        form.addRow("Width d", self.d_spin)
        form.addRow("Chunk", self.chunk_spin)
        form.addRow("Seed", self.seed_spin)
        self.check_note = note(rich=True)
        controls = QVBoxLayout()
        controls.addLayout(form)
        controls.addWidget(self.token_slider)
        controls.addWidget(self.check_note)
        cache_form = QFormLayout()
        cache_form.addRow("Caches at", self.context_spin)
        controls.addLayout(cache_form)
        controls.addStretch(1)
        self.state_view = MatrixView("S_t and z_t", decimals=2)
        self.rows_view = MatrixView("Token t, two ways", decimals=3)
        self.caches = text_table(
            ["Model", "Kind", "Per token", "At the length"], row_labels=False, size_columns=True
        )
        self.cache_plot = loglog_plot(
            "What a decoder keeps (bf16)", "bytes", "tokens so far", legend_at=(8, 8)
        )
        for color, (model, curve) in zip(PALETTE, cache_curves().items(), strict=True):
            self.cache_plot.plot(CACHE_LENGTHS, curve, pen=pg.mkPen(color, width=2), name=model)
        view = QWidget()
        layout = QVBoxLayout(view)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(side_by_side(self.state_view, self.rows_view), 2)
        layout.addWidget(side_by_side(self.caches, self.cache_plot), 3)
        self.layout_with(
            "Causal, the state is a running sum: S_t = S_{t−1} + φ(k_t)·v_tᵀ and z_t = z_{t−1} + φ(k_t). "
            "Each token reads φ(q_t)·S_t / φ(q_t)·z_t, and S stays d × d however long the text.",
            controls,
            view,
        )

    def views(self) -> dict[str, QWidget]:
        return {
            "state": self.state_view,
            "token_row": self.rows_view,
            "caches": self.caches,
            "cache_plot": self.cache_plot,
        }

    def script(self) -> Script:
        return scripts.running(self.state)

    def draw(self, r: RunningResult) -> Notice:
        s = self.state
        d = r.S.shape[0]
        dims = [f"v{j + 1}" for j in range(d)]
        self.state_view.set_data(np.column_stack([r.S, r.z]), [f"φ{i + 1}" for i in range(d)], [*dims, "z"])
        self.rows_view.set_data(np.vstack([r.from_state, r.parallel[r.token]]), ["state", "parallel"], dims)
        self.token_slider.set_maximum(s.length - 1)
        self.check_note.setText(
            f"<b>Against the parallel form</b>, all {s.length} rows: largest difference "
            f"{r.max_diff['recurrent']:.1e} token by token, {r.max_diff['chunked']:.1e} in chunks of "
            f"{s.chunk}. The state holds {d * (d + 1)} numbers at every t."
        )
        rows = [(model, kind, size_text(first), size_text(total)) for model, kind, first, total in r.caches]
        fill_table(self.caches, rows)
        for row, shape in enumerate(CACHES):
            self.caches.item(row, 0).setToolTip(shape.source)
        self.caches.horizontalHeaderItem(3).setText(f"At {s.context:,}")
        return None

    def exercise(self) -> None:
        self.length_spin.setValue(0)
        self.length_spin.setValue(64)
        self.chunk_spin.setValue(0)
        self.chunk_spin.setValue(7)
        for t in (0, 63, 20):
            self.token_slider.setValue(t)
        self.d_spin.setValue(0)
        self.d_spin.setValue(4)
        self.context_spin.setValue(0)
        self.context_spin.setValue(1 << 20)
        self.seed_spin.setValue(1)
        self.length_spin.setValue(12)
        self.chunk_spin.setValue(4)
        self.token_slider.setValue(5)
        self.context_spin.setValue(32_768)
        self.seed_spin.setValue(0)
