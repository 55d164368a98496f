"""Step 4: steering: add one vector (the difference of two texts' streams) to the stream after a
layer, and compare the greedy completions token by token; a sweep of strengths against the next
token's probability and the entropy, where the text breaks down marked."""

from __future__ import annotations

import html

import pyqtgraph as pg
from PySide6.QtWidgets import (
    QComboBox,
    QFormLayout,
    QHBoxLayout,
    QLineEdit,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from app.panels.scripts import Script
from app.panels.step import Live, Notice, Step
from app.panels.stream import scripts
from app.panels.stream.state import SteerResult, SteerState, compute_steer
from app.panels.stream.views import MOST, PENS
from app.widgets.plots import plot
from app.widgets.progress import RunProgress, show_runs
from app.widgets.reflow_grid import side_by_side
from app.widgets.sliders import LabelledSlider
from app.widgets.spin_boxes import float_spin, spin
from app.widgets.tables import fill_table, text_table
from app.widgets.text import note
from core.interp.steering import MODES

STRENGTHS = (-3.0, 3.0)  # the slider's range; the sweep reaches as far as the box beside it says


def marker_line(view: pg.PlotWidget, color: str) -> pg.InfiniteLine:
    line = pg.InfiniteLine(angle=90, pen=pg.mkPen(color, width=1.5, style=pg.QtCore.Qt.PenStyle.DashLine))
    view.addItem(line)
    return line


class SteerPage(Step):
    def __init__(self):
        super().__init__(Live(SteerState(), compute_steer, background=True))
        s = self.state
        self.prompt = self.bind(QLineEdit(s.prompt), "prompt")
        self.plus = self.bind(QLineEdit(s.plus), "plus")
        self.minus = self.bind(QLineEdit(s.minus), "minus")
        self.prefix = self.bind(QLineEdit(s.prefix), "prefix")
        self.layer = self.bind(spin(s.layer, 1, MOST), "layer")
        self.mode = QComboBox()
        self.mode.addItems(list(MODES))
        self.bind(self.mode, "mode")
        self.strength = self.bind(LabelledSlider("Strength", *STRENGTHS, s.strength), "strength")
        self.new = self.bind(spin(s.new, 1, 200), "new")
        self.reach = self.bind(float_spin(s.reach, -1e6, 1e6, decimals=2, step=0.5), "reach")
        self.token = self.bind(QLineEdit(s.token), "token")
        self.token.setPlaceholderText("the normal completion's first")
        self.progress = RunProgress(
            "not run yet", "%v of %m steps", "done", "stopped at %v of %m", "not run: see the message above"
        )
        self.cancel = QPushButton("Cancel")
        show_runs(self.live, self.progress, self.cancel)
        self.table = text_table(["normal", "steered"])
        self.prob = plot("Next token's probability by strength", "strength", "probability")
        self.entropy = plot("Entropy of the next token", "strength", "nats")
        self.prob_curve = self.prob.plot(pen=pg.mkPen(PENS["leaving"], width=2), symbol="o", symbolSize=4)
        self.entropy_curve = self.entropy.plot(
            pen=pg.mkPen(PENS["MLP adds"], width=2), symbol="o", symbolSize=4
        )
        self.at = [marker_line(v, "#888888") for v in (self.prob, self.entropy)]  # the slider's strength
        self.breaks = [marker_line(v, "#d62728") for v in (self.prob, self.entropy)]  # the breakdown
        self.summary = note(rich=True)
        controls = QFormLayout()
        for label, field in (("Towards", self.plus), ("Away from", self.minus), ("Each after", self.prefix),
                             ("After layer", self.layer), ("Mode", self.mode), ("New tokens", self.new),
                             ("Sweep up to", self.reach), ("Sweep follows", self.token)):  # fmt: skip
            controls.addRow(label, field)
        controls.addRow(self.strength)
        run = QHBoxLayout()
        run.addWidget(self.progress, 1)
        run.addWidget(self.cancel)
        controls.addRow(run)
        plots = QVBoxLayout()
        plots.addWidget(self.prob)
        plots.addWidget(self.entropy)
        column = QWidget()
        column.setLayout(plots)
        views = side_by_side(self.table, column)
        self.layout_with(
            "Read two texts after the same prefix and take the difference of their streams after a "
            "layer: one vector. Add it, times a strength, to the stream at every token but the first "
            "while the model writes, and its words lean towards the first text.",
            controls,
            views,
            (self.summary,),
            wide=(("Prompt", self.prompt),),
        )

    def views(self) -> dict[str, QWidget]:
        return {"probability": self.prob, "entropy": self.entropy}

    def script(self) -> Script:
        return scripts.steering(self.state)

    def draw(self, r: SteerResult) -> Notice:
        n = max(len(r.normal_pieces), len(r.steered_pieces))
        rows = [[(p[k] if k < len(p) else "") for p in (r.normal_pieces, r.steered_pieces)] for k in range(n)]
        fill_table(self.table, rows, [str(k + 1) for k in range(n)])
        for line in self.at:
            line.setValue(self.state.strength)
        sweep = r.sweep
        for line in self.breaks:
            line.setVisible(sweep is not None and sweep.breakdown is not None)
        x = [] if sweep is None else sweep.strengths
        self.prob_curve.setData(x, [] if sweep is None else sweep.prob)
        self.entropy_curve.setData(x, [] if sweep is None else sweep.entropy)
        self.prob.setTitle(f"p({r.token}) by strength")
        self.prob.setYRange(0.0, 1.0, padding=0.02)  # fixed ranges: the axes keep their width
        self.entropy.setYRange(0.0, sweep.most if sweep else 1.0, padding=0.02)  # up to every token alike
        s, v = self.state, r.vector
        what = (
            "removes the vector's direction" if s.mode == "remove" else f"adds {s.strength:.2f} × the vector"
        )
        plus, minus = (html.escape(repr(t), quote=False) for t in v.read)
        text = (
            f"The vector is the stream of {plus} minus that of {minus} at their last tokens, size "
            f"{v.norm:.4g}; the streams it is the difference of, {v.stream_norm:.4g}. "
            f"The steered run {what} after layer {s.layer}."
        )
        if sweep is None:
            text += " The sweep varies how much is added: choose mode add and a reach to see it."
        elif sweep.breakdown is None:
            text += " Within this sweep the entropy never rises and then collapses: no breakdown yet."
        else:
            at = float(sweep.strengths[sweep.breakdown])
            for line in self.breaks:
                line.setValue(at)
            text += (
                f" Red: near strength {at:.3g} the next token is least certain (entropy "
                f"{sweep.entropy[sweep.breakdown]:.3g} nats); beyond it one token swamps the rest and "
                "the text breaks down."
            )
        if r.steered.overflow is not None:
            text += (
                f" The steered logits overflowed at new token {r.steered.overflow + 1}; the completion "
                "ends there."
            )
        decode = r.model.tokenizer.decode
        text += "".join(
            f"<br><b>{name}:</b> {html.escape(s.prompt + decode(list(g.ids)))}"
            for name, g in (("normal", r.normal), ("steered", r.steered))
        )
        self.summary.setText(text)
        if r.steered.overflow is not None:
            return "The strength is too large: the logits overflowed.", "warning"
        return (r.cut, "warning") if r.cut else None
