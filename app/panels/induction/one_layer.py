"""Step 3: the same training with one layer. Without a layer below to say which token came before,
no head can find "the token after the earlier copy", and the repeat stays a guess."""

from __future__ import annotations

import math
from dataclasses import replace

import numpy as np
import pyqtgraph as pg
from PySide6.QtWidgets import QFormLayout, QWidget

from app.panels.induction import scripts
from app.panels.induction.train_plots import REPEAT, guess_line
from app.panels.scripts import Script
from app.panels.step import Live, Notice, Step
from app.trainer import RunButtons, Trainer
from app.widgets.plots import plot
from app.widgets.text import note

ONE_LAYER = "#1f77b4"


class OneLayerPage(Step):
    def __init__(self, settings: Live, two_layers: Trainer, one_layer: Trainer):
        super().__init__(settings)
        self.two, self.one = two_layers, one_layer
        self.buttons = RunButtons(one_layer, self.start, "Train one layer", reset=False)
        self.start_button, self.pause_button = self.buttons.start_button, self.buttons.pause_button
        controls = QFormLayout()
        controls.addRow(self.buttons)
        self.summary = note()
        self.loss_plot = plot("Loss on the repeated copy", "training step", "nats")
        self.loss_plot.addLegend(offset=(-8, 8))
        self.two_curve = self.loss_plot.plot(pen=pg.mkPen(REPEAT, width=2.5), name="2 layers")
        self.one_curve = self.loss_plot.plot(pen=pg.mkPen(ONE_LAYER, width=2.5), name="1 layer")
        self.guess_line = guess_line(self.loss_plot)
        self.layout_with(
            "Train the same model with a single layer, same seed, steps and learning rate. An "
            "induction head needs a previous-token head in an earlier layer to build on.",
            controls,
            self.loss_plot,
            (self.summary,),
        )
        for trainer in (two_layers, one_layer):
            trainer.updated.connect(self.show_training)
        one_layer.failed.connect(lambda text: self.tell(text, "error"))
        self.show_training()

    def views(self) -> dict[str, QWidget]:
        return {"one-layer": self.loss_plot}

    def start(self) -> None:
        """Train step 2's settings with one layer (resumes a paused 1-layer run)."""
        try:
            settings = replace(self.live.wanted, layers=1).checked()
        except ValueError as exc:
            self.tell(str(exc), "error")
            return
        self.one.start(settings)

    def script(self) -> Script:
        return scripts.one_layer(self.two.shown(self.state), self.one.shown(replace(self.state, layers=1)))

    def draw(self, settings) -> Notice:
        self.guess_line.setValue(math.log(settings.vocab))
        return None

    def show_training(self) -> None:
        self.buttons.show_phase(self.one.phase)
        lines = []
        for trainer, curve, name in (
            (self.two, self.two_curve, "2 layers"),
            (self.one, self.one_curve, "1 layer"),
        ):
            cps = trainer.checkpoints
            curve.setData([c.step for c in cps], [c.loss_second for c in cps])
            if cps:
                last = cps[-1]
                layer, head = np.unravel_index(last.induction.argmax(), last.induction.shape)
                lines.append(
                    f"{name}, step {last.step:,}: repeat loss {last.loss_second:.2f} nats; best induction "
                    f"score {last.induction.max():.2f} (layer {layer + 1}, head {head + 1})"
                )
            else:
                lines.append(f"{name}: not trained yet" + (" (step 2)" if trainer is self.two else ""))
        self.summary.setText("\n".join(lines))
