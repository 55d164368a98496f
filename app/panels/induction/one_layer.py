"""Step 3: the same training with one layer. Without a layer below to say which token came before,
no head can find "the token after the earlier copy", and the repeat stays a guess."""

from __future__ import annotations

import math

import numpy as np
import pyqtgraph as pg
from PySide6.QtWidgets import QFormLayout, QWidget

from app.panels.induction import scripts
from app.panels.induction.state import one_layer
from app.panels.induction.train_plots import REPEAT, guess_line
from app.panels.scripts import Script
from app.panels.step import Live, Notice, Step
from app.panels.training import RunButtons, shown, train_to_end
from app.widgets.plots import plot
from app.widgets.text import note

ONE_LAYER = "#1f77b4"


class OneLayerPage(Step):
    def __init__(self, settings: Live, two_layers: Live, one_layer_run: Live):
        super().__init__(settings)
        self.two, self.one = self.follow(two_layers), self.follow(one_layer_run)
        self.buttons = RunButtons(one_layer_run, self.start, "Train one layer", reset=False)
        self.start_button, self.pause_button = self.buttons.start_button, self.buttons.pause_button
        controls = QFormLayout()
        controls.addRow("Train to step", self.buttons.until_spin)
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

    def views(self) -> dict[str, QWidget]:
        return {"one-layer": self.loss_plot}

    def start(self) -> None:
        """Train step 2's settings with one layer (resumes a paused 1-layer run)."""
        train_to_end(self.one, one_layer(self.live.wanted), self.tell)

    def script(self) -> Script:
        two, one = shown(self.two.result, self.state), shown(self.one.result, one_layer(self.state))
        return scripts.one_layer(two, one)

    def draw(self, settings) -> Notice:
        self.guess_line.setValue(math.log(settings.vocab))
        lines = []
        runs = ((self.two, self.two_curve, "2 layers"), (self.one, self.one_curve, "1 layer"))
        for live, curve, name in runs:
            cps = () if live.result is None else live.result.checkpoints
            curve.setData([c.step for c in cps], [c.loss_second for c in cps])
            if cps:
                last = cps[-1]
                layer, head = np.unravel_index(last.induction.argmax(), last.induction.shape)
                lines.append(
                    f"{name}, step {last.step:,}: repeat loss {last.loss_second:.2f} nats; best induction "
                    f"score {last.induction.max():.2f} (layer {layer + 1}, head {head + 1})"
                )
            else:
                lines.append(f"{name}: not trained yet" + (" (step 2)" if live is self.two else ""))
        self.summary.setText("\n".join(lines))
        return None
