"""Step 1: the bracket trick: softmax's n × n weights beside linear attention computed twice,
through its own n × n matrix and through the d × d state that replaces it; and what each costs."""

from __future__ import annotations

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QFormLayout, QLineEdit, QVBoxLayout, QWidget

from app.panels.linear import scripts
from app.panels.linear.state import COUNT_LENGTHS, BracketResult, BracketState, compute_bracket, count_curves
from app.panels.scripts import Script
from app.panels.step import Live, Notice, Step
from app.widgets import Heatmap, MatrixView
from app.widgets.plots import loglog_plot
from app.widgets.reflow_grid import side_by_side
from app.widgets.spin_boxes import spin
from app.widgets.text import note
from app.widgets.weight_bars import OTHER_COLOR, TARGET_COLOR


class BracketPage(Step):
    def __init__(self):
        super().__init__(Live(BracketState(), compute_bracket))
        s = self.state
        self.text_edit = self.bind(QLineEdit(s.text), "text")
        self.d_model_spin = self.bind(spin(s.d_model, 0, 16), "d_model")
        self.d_k_spin = self.bind(spin(s.d_k, 0, 16), "d_k")
        self.seed_spin = self.bind(spin(s.seed, 0, 2**31 - 1), "seed")
        form = QFormLayout()
        form.addRow("Tokens", self.text_edit)
        form.addRow("d_model", self.d_model_spin)
        form.addRow("d_k", self.d_k_spin)
        form.addRow("Seed", self.seed_spin)
        self.normaliser_note = note(rich=True)
        self.count_note = note(rich=True)
        controls = QVBoxLayout()
        controls.addLayout(form)
        controls.addWidget(self.normaliser_note)
        controls.addWidget(self.count_note)
        controls.addStretch(1)
        self.softmax_map = Heatmap("softmax(Q·Kᵀ/√d): n × n", colorbar=False)
        self.linear_map = Heatmap("φ(q)·φ(k) / φ(q)·z: n × n", colorbar=False)
        self.state_view = MatrixView("S = φ(K)ᵀ·V and z", decimals=2)
        self.outputs = MatrixView("Rows: softmax, n × n, d × d", decimals=2)
        self.counts = loglog_plot("Multiply-adds of one head", "multiply-adds")
        self.softmax_curve = self.counts.plot(pen=pg.mkPen(OTHER_COLOR, width=2), name="softmax: 2n²d")
        self.linear_curve = self.counts.plot(pen=pg.mkPen(TARGET_COLOR, width=2), name="linear: 2n·d(d + 1)")
        self.crossover = pg.InfiniteLine(angle=90, pen=pg.mkPen("#888888", style=Qt.PenStyle.DashLine))
        self.counts.addItem(self.crossover)
        view = QWidget()
        layout = QVBoxLayout(view)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(side_by_side(self.softmax_map, self.linear_map), 2)
        layout.addWidget(side_by_side(self.state_view, self.outputs), 3)
        layout.addWidget(self.counts, 1)
        self.layout_with(
            "Swap exp(q·k) for φ(q)·φ(k) and the brackets can move: φ(Q)·(φ(K)ᵀ·V) builds a d × d "
            "state instead of the n × n weights. φ = elu + 1 keeps every weight positive.",
            controls,
            view,
        )
        self.drawn_d = 0  # the width the count curves were drawn for

    def views(self) -> dict[str, QWidget]:
        return {
            "softmax_weights": self.softmax_map,
            "linear_weights": self.linear_map,
            "state": self.state_view,
            "rows": self.outputs,
            "multiply_adds": self.counts,
        }

    def script(self) -> Script:
        return scripts.bracket(self.state)

    def draw(self, r: BracketResult) -> Notice:
        tokens, d = r.tokens, self.state.d_k
        self.softmax_map.set_data(r.softmax.weights, tokens, tokens, levels=(0.0, 1.0))
        self.linear_map.set_data(r.linear_weights, tokens, tokens, levels=(0.0, 1.0))
        dims = [f"v{j + 1}" for j in range(d)]
        b = r.bracket
        self.state_view.set_data(
            np.column_stack([b.state, b.sum_keys]), [f"φ{i + 1}" for i in range(d)], [*dims, "z"]
        )
        forms = (r.softmax.output, r.linear_rows, b.output)
        rows = np.stack(forms, axis=1).reshape(-1, d)  # each token's three rows together
        names = [f"{t} · {form}" for t in tokens for form in ("softmax", "n × n", "d × d")]
        self.outputs.set_data(rows, names, dims)
        self.outputs.highlight(rows=range(0, rows.shape[0], 3))
        row = min(1, len(tokens) - 1)
        self.normaliser_note.setText(
            f"<b>Normaliser</b> of “{tokens[row]}”: φ(q)·z = {b.normaliser[row]:.4g}, the sum of its "
            f"row before dividing. The two linear forms differ by {r.difference:.1e}: rounding only."
        )
        c = r.counts
        self.count_note.setText(
            f"<b>At {len(tokens)} tokens</b>: {c.softmax:,} multiply-adds for softmax, {c.linear:,} for "
            f"linear. With d = {d}, linear needs fewer from n = {c.crossover:,} on."
        )
        if d != self.drawn_d:
            self.drawn_d = d
            soft, lin = count_curves(d)
            self.softmax_curve.setData(COUNT_LENGTHS, soft)
            self.linear_curve.setData(COUNT_LENGTHS, lin)
            self.crossover.setValue(np.log10(c.crossover))
        return None

    def exercise(self) -> None:
        for text in ("", "a " * 17, "one", "the cat sat down"):
            self.text_edit.setText(text)
        for d in (0, 16, 4):
            self.d_k_spin.setValue(d)
        self.d_model_spin.setValue(0)
        self.d_model_spin.setValue(8)
        self.seed_spin.setValue(3)
        self.seed_spin.setValue(0)
