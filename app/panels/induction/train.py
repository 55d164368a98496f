"""Step 2: train the model live and watch the loss fall off a cliff as an induction head forms."""

from __future__ import annotations

import numpy as np
import pyqtgraph as pg
from PySide6.QtWidgets import QFormLayout, QGridLayout, QWidget

from app.panels.induction import scripts
from app.panels.induction.train_plots import (
    FIRST,
    REPEAT,
    guess_line,
    head_pen,
    marker,
    place_marker,
    set_ranges,
)
from app.panels.scripts import Script
from app.panels.step import Live, Notice, Step
from app.panels.training import RunButtons, TrainResult, run_status, shown, train_to_end
from app.theme import style_plots
from app.widgets import Heatmap
from app.widgets.head_grid import HeadGrid
from app.widgets.plots import legend_below, legend_lines, plot
from app.widgets.spin_boxes import float_spin, spin
from app.widgets.text import note
from core.lab.settings import first_formed
from core.maths.head_tiles import head_tiles


class TrainPage(Step):
    def __init__(self, settings: Live, training: Live):
        super().__init__(settings)
        self.training = self.follow(training)
        s = self.state
        self.seed_spin = self.bind(spin(s.seed, -1, 1_000_000), "seed")
        self.steps_spin = self.bind(spin(s.steps, 0, 1_000_000, step=100), "steps")
        self.lr_spin = self.bind(float_spin(s.lr, -1.0, 100.0, decimals=5, step=0.0005), "lr")
        self.layers_spin = self.bind(spin(s.layers, 0, 4), "layers")
        self.heads_spin = self.bind(spin(s.heads, 0, 64), "heads")
        self.buttons = RunButtons(training, self.start)
        self.start_button, self.pause_button = self.buttons.start_button, self.buttons.pause_button
        self.reset_button = self.buttons.reset_button
        controls = QFormLayout()
        controls.addRow("Seed", self.seed_spin)
        controls.addRow("Steps", self.steps_spin)
        controls.addRow("Learning rate", self.lr_spin)
        controls.addRow("Layers", self.layers_spin)
        controls.addRow("Heads", self.heads_spin)
        controls.addRow("Train to step", self.buttons.until_spin)
        controls.addRow(self.buttons)
        self.status = note()
        self.loss_plot = plot("Loss per token", "training step", "nats")
        self.loss_plot.getAxis("left").enableAutoSIPrefix(False)  # nats, never "nats (x0.001)"
        legend_below(self.loss_plot)
        self.first_curve = self.loss_plot.plot(pen=pg.mkPen(FIRST, width=2), name="first copy (random)")
        self.repeat_curve = self.loss_plot.plot(pen=pg.mkPen(REPEAT, width=2.5), name="second copy (repeat)")
        legend_lines(self.loss_plot, self.first_curve, "first copy", "(random)")
        legend_lines(self.loss_plot, self.repeat_curve, "second copy", "(repeat)")
        self.guess_line = guess_line(self.loss_plot)
        self.score_plot = plot("Head scores (dashed: previous token)", "training step", "score")
        self.score_plot.setYRange(0, 1, padding=0.02)
        legend_below(self.score_plot)
        self.score_curves: dict[tuple[int, int, bool], pg.PlotDataItem] = {}
        self.loss_marker, self.score_marker = marker(top=False), marker(top=True)
        for view, line in ((self.loss_plot, self.loss_marker), (self.score_plot, self.score_marker)):
            view.addItem(line)
            view.getPlotItem().vb.sigResized.connect(lambda _vb, line=line: place_marker(line))
        set_ranges(self.loss_plot, self.score_plot, self.guess_line, self.state)  # before any run
        self.grid = HeadGrid()
        self.large = Heatmap("", colorbar=False, cell_text=False, max_ticks=8)
        self.chosen: tuple[int, int] | None = None  # the head clicked in the grid; None: the best one
        self.prepared = None  # the settings the score curves and axes were made for
        views = QGridLayout()
        views.addWidget(self.loss_plot, 0, 0)
        views.addWidget(self.score_plot, 0, 1)
        self.probe_note = note()
        views.addWidget(self.probe_note, 1, 0, 1, 2)
        views.addWidget(self.grid, 2, 0)
        views.addWidget(self.large, 2, 1)
        views.setColumnStretch(0, 1)
        views.setColumnStretch(1, 1)
        views.setRowStretch(0, 3)
        views.setRowStretch(2, 2)
        self.layout_with(
            "Press Start. The repeat's loss drifts down slowly for a few hundred steps, then falls "
            "off a cliff as one layer-2 head learns to look just after the current token's earlier copy.",
            controls,
            views,
            (self.status,),
        )
        self.grid.clicked.connect(self.choose)
        training.busy.connect(lambda _running: self.show_status())

    def views(self) -> dict[str, QWidget]:
        return {"losses": self.loss_plot, "scores": self.score_plot, "probe": self.grid}

    def choose(self, layer: int, head: int) -> None:
        """Open one head of the grid large."""
        self.chosen = (layer, head)
        self.mark_stale()

    def start(self) -> None:
        """Train with the settings the controls show, or say which one is out of range."""
        train_to_end(self.training, self.live.wanted, self.tell)

    def prepare(self, settings, run: bool = True) -> None:
        """Empty views sized for a new run: one score curve per head and fixed axis ranges, so a
        redraw while training only moves points (no curve to create, no axis to lay out again).
        Without ``run`` (nothing trained): the axes only, no score curve in the legend."""
        self.chosen, self.prepared = None, settings if run else None
        for key in list(self.score_curves):
            self.score_plot.removeItem(self.score_curves.pop(key))
        for layer in range(settings.layers if run else 0):
            for head in range(settings.heads):
                for dashed in (False, True):
                    name = None if dashed else f"L{layer + 1} H{head + 1}"
                    pen = head_pen(layer, head, settings.heads, dashed)
                    self.score_curves[layer, head, dashed] = self.score_plot.plot(pen=pen, name=name)
        style_plots(self.score_plot)  # the new legend entries take the theme's text colour and size
        set_ranges(self.loss_plot, self.score_plot, self.guess_line, settings)
        t = 2 * settings.length
        self.grid.set_data(head_tiles(np.zeros((settings.layers, settings.heads, t, t))))
        about = (
            f"Every head reading one probe sequence, a block of {settings.length} tokens shown twice (rows "
            "look at columns); the best induction head is outlined. Its stripe runs one place right of the "
            f"diagonal that starts {settings.length} rows down."
        )
        self.probe_note.setText(about if run else "")
        self.clear_views()
        self.show_status()

    def script(self) -> Script:
        return scripts.train(*shown(self.training.result, self.state))

    def draw(self, settings) -> Notice:
        """Curves, scores and probe maps of the run on screen; before one, the axes of the run
        these settings would train."""
        r: TrainResult | None = self.training.result
        if r is None or not r.checkpoints:
            self.prepare(settings, run=False)
            return None
        if self.prepared != r.state.settings:
            self.prepare(r.state.settings)
        cps = r.checkpoints
        steps = np.array([c.step for c in cps])
        self.first_curve.setData(steps, [c.loss_first for c in cps])
        self.repeat_curve.setData(steps, [c.loss_second for c in cps])
        induction = np.stack([c.induction for c in cps])  # (checkpoints, L, H)
        previous = np.stack([c.previous for c in cps])
        for layer, head in np.ndindex(induction.shape[1:]):
            for dashed, scores in ((False, induction), (True, previous)):
                self.score_curves[layer, head, dashed].setData(steps, scores[:, layer, head])
        formed = first_formed(cps)
        for line in (self.loss_marker, self.score_marker):
            line.setVisible(formed is not None)
            if formed is not None:
                line.setValue(formed.step)
                line.label.setFormat(f"step {formed.step}")
                place_marker(line)
        last = cps[-1]
        self.grid.set_data(head_tiles(last.probe))
        fits = self.chosen is not None and all(
            c < n for c, n in zip(self.chosen, last.induction.shape, strict=True)
        )
        best = np.unravel_index(last.induction.argmax(), last.induction.shape)
        shown_head = self.chosen if fits else (int(best[0]), int(best[1]))
        self.grid.select(*shown_head)
        tokens = [str(int(token)) for token in r.run.eval_ids[0]]
        self.large.set_data(last.probe[shown_head], tokens, tokens, levels=(0.0, 1.0))
        self.large.set_title(
            f"L{shown_head[0] + 1} H{shown_head[1] + 1}: induction {last.induction[shown_head]:.2f}"
        )
        self.show_status()
        return None

    def show_status(self) -> None:
        self.status.setText(run_status(self.training, describe))

    def clear_views(self) -> None:
        """No curves, no marker, an empty large map (the grid keeps its shape)."""
        for item in (self.first_curve, self.repeat_curve, *self.score_curves.values()):
            item.setData([], [])
        self.loss_marker.setVisible(False)
        self.score_marker.setVisible(False)
        self.large.set_data(np.zeros((1, 1)), [""], [""], levels=(0.0, 1.0))
        self.large.set_title("")


def describe(r: TrainResult) -> str:
    """The run's last checkpoint, its losses and best head, and where a head first formed."""
    last = r.checkpoints[-1]
    layer, head = np.unravel_index(last.induction.argmax(), last.induction.shape)
    formed = first_formed(r.checkpoints)
    return (
        f"step {last.step:,} of {r.state.settings.steps:,}\n"
        f"repeat loss {last.loss_second:.2f} nats (first copy {last.loss_first:.2f})\n"
        f"best induction head: layer {layer + 1}, head {head + 1}: {last.induction[layer, head]:.2f}"
        + (f"\ngreen line: a head first passed 0.5 at step {formed.step}" if formed is not None else "")
    )
