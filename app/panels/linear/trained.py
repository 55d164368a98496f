"""Step 5: trained, not assumed: a softmax, a linear and a delta-rule model of the same size
trained live on multi-query associative recall, their accuracy landing as they learn."""

from __future__ import annotations

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QFormLayout, QWidget

from app.panels.linear import scripts
from app.panels.linear.state import check_training
from app.panels.scripts import Script
from app.panels.step import Live, Notice, Step
from app.panels.training import (
    RunButtons,
    Training,
    TrainResult,
    TrainState,
    follow,
    run_status,
    shown,
    train_to_end,
)
from app.widgets.plots import legend_below, plot
from app.widgets.reflow_grid import side_by_side
from app.widgets.spin_boxes import spin
from app.widgets.text import note
from core.lab.settings import RECALL_LIMITS, RecallSettings

COLORS = {"softmax": "#555555", "linear": "#3d7bd9", "delta": "#d62728"}
NAMES = {"softmax": "softmax", "linear": "linear", "delta": "delta"}


class TrainedPage(Step):
    def __init__(self):
        super().__init__(Live(RecallSettings(), check_training))
        run = Training("core.lab.recall_task:RecallRun")
        self.training = self.follow(Live(TrainState(self.state), run, background=True))
        self.live.changed.connect(lambda: follow(self.training, self.state))
        self.finals: dict[int, dict[str, float]] = {}  # pairs → each model's accuracy at the end of a run
        s = self.state
        self.seed_spin = self.bind(spin(s.seed, -1, 1_000_000), "seed")
        self.pairs_spin = self.bind(spin(s.pairs, 0, 64), "pairs")
        self.steps_spin = self.bind(spin(s.steps, 0, 100_000, step=100), "steps")
        self.buttons = RunButtons(self.training, self.start)
        self.start_button, self.pause_button = self.buttons.start_button, self.buttons.pause_button
        self.reset_button = self.buttons.reset_button
        controls = QFormLayout()
        controls.addRow("Seed", self.seed_spin)
        controls.addRow("Pairs", self.pairs_spin)
        controls.addRow("Steps", self.steps_spin)
        controls.addRow("Train to step", self.buttons.until_spin)
        controls.addRow(self.buttons)
        self.status = note()
        self.curve_plot = plot("While training", "training step", "accuracy")
        self.final_plot = plot("At the end of each run", "pairs N", "accuracy")
        for view in (self.curve_plot, self.final_plot):
            view.setYRange(0, 1.02, padding=0)
            legend_below(view)
        self.curves = {
            m: self.curve_plot.plot(pen=pg.mkPen(c, width=2), name=NAMES[m]) for m, c in COLORS.items()
        }
        self.finals_curves = {
            m: self.final_plot.plot(pen=pg.mkPen(c, width=2), symbol="o", symbolBrush=c, name=NAMES[m])
            for m, c in COLORS.items()
        }
        self.chance = pg.InfiniteLine(angle=0, pen=pg.mkPen("#888888", style=Qt.PenStyle.DashLine))
        self.curve_plot.addItem(self.chance)
        self.layout_with(
            "Three models, alike but for how a token reads earlier ones, learn one task: key-value pairs, "
            "then keys asked for. Press Start; dashed: a guess among the N values.",
            controls,
            side_by_side(self.curve_plot, self.final_plot),
            (self.status,),
        )
        self.training.busy.connect(lambda _running: self.show_status())

    def views(self) -> dict[str, QWidget]:
        return {"accuracy": self.curve_plot, "final_accuracy": self.final_plot}

    def final_plot_data(self, mixer: str) -> tuple[list[int], list[float]]:
        """The pairs of the finished runs, and ``mixer``'s final accuracy at each."""
        pairs = sorted(self.finals)
        return pairs, [self.finals[n][mixer] for n in pairs]

    def start(self) -> None:
        """Train with the settings the controls show, or say which one is out of range."""
        train_to_end(self.training, self.live.wanted, self.tell)

    def script(self) -> Script:
        return scripts.trained(*shown(self.training.result, self.state), self.finals)

    def draw(self, settings) -> Notice:
        """The curves of the run on screen, and its final accuracy once it reaches its last step."""
        self.chance.setValue(1.0 / settings.pairs)
        self.curve_plot.setXRange(0, settings.steps, padding=0.02)
        self.final_plot.setXRange(0, RECALL_LIMITS["pairs"].high, padding=0.02)
        r: TrainResult | None = self.training.result
        cps = () if r is None else r.checkpoints
        steps = np.array([c.step for c in cps])
        for mixer, curve in self.curves.items():
            curve.setData(steps, [c.accuracy[mixer] for c in cps])
        if cps and cps[-1].step == r.state.settings.steps:
            self.finals[r.state.settings.pairs] = dict(cps[-1].accuracy)
            for mixer, curve in self.finals_curves.items():
                curve.setData(*self.final_plot_data(mixer))
        self.show_status()
        return None

    def show_status(self) -> None:
        self.status.setText(run_status(self.training, describe))

    def exercise(self) -> None:
        self.pairs_spin.setValue(0)
        self.pairs_spin.setValue(64)
        self.steps_spin.setValue(0)
        self.seed_spin.setValue(-1)
        self.start_button.click()  # refused: says which setting
        self.pairs_spin.setValue(8)
        self.steps_spin.setValue(600)
        self.seed_spin.setValue(0)


def describe(r: TrainResult) -> str:
    """The run's last step and each model's accuracy there."""
    s, last = r.state.settings, r.checkpoints[-1]
    accuracy = ", ".join(f"{NAMES[m]} {a:.2f}" for m, a in last.accuracy.items())
    return f"step {last.step:,} of {s.steps:,}, {s.pairs} pairs; accuracy {accuracy}"
