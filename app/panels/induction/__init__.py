"""Panel "Grow an induction head": train a tiny attention-only transformer live and watch
in-context copying appear as a sudden drop in the loss (Olsson et al., 2022)."""

from __future__ import annotations

from app import worker
from app.panels.base import Panel
from app.panels.induction.knockout import KnockoutPage
from app.panels.induction.one_layer import OneLayerPage
from app.panels.induction.state import check_settings, one_layer
from app.panels.induction.task import TaskPage
from app.panels.induction.train import TrainPage
from app.panels.step import Live
from app.panels.training import Training, TrainState, follow
from core.lab.settings import InductionSettings

RUN = "core.lab.training:InductionRun"

# The smoke run trains a smaller model (2 heads, blocks of 16) that grows its head in ~200 steps.
EXERCISE = {"steps": 300, "heads": 2, "length": 16}


class InductionPanel(Panel):
    steps = ("The task", "Train", "One layer is not enough", "Knock a head out")

    def __init__(self, parent=None):
        super().__init__(parent)
        self.settings = Live(InductionSettings(), check_settings)
        # The 2-layer run of step 2 and the 1-layer run of step 3, both following the settings.
        s = self.settings.state
        self.training = Live(TrainState(s), Training(RUN), background=True)
        self.one_layer_training = Live(TrainState(one_layer(s)), Training(RUN), background=True)
        self.settings.changed.connect(self.follow_settings)
        self.task = TaskPage()
        self.train = TrainPage(self.settings, self.training)
        self.one_layer = OneLayerPage(self.settings, self.training, self.one_layer_training)
        self.knockout = KnockoutPage(self.training)
        self.add_steps(self.task, self.train, self.one_layer, self.knockout)
        self.set_step(0)

    def follow_settings(self) -> None:
        """Both runs take the new settings (a run trained so far is trained again with them)."""
        s = self.settings.state
        for live, settings in ((self.training, s), (self.one_layer_training, one_layer(s))):
            follow(live, settings)

    def exercise(self) -> None:
        """Bad and good values everywhere, then a short real training run of both models."""
        t, tr, k = self.task, self.train, self.knockout
        for spin, values in (
            (t.length_spin, (0, 64, 12)),
            (t.vocab_spin, (1, 2048, 64)),
            (t.seed_spin, (5, 0)),
        ):
            for value in values:
                spin.setValue(value)
        for spin, values in (
            (tr.steps_spin, (0, 1_000_000)),
            (tr.lr_spin, (0.0, -0.5, 50.0, 0.001)),
            (tr.layers_spin, (3, 0, 2)),
            (tr.heads_spin, (3, 0, 4)),
        ):
            for value in values:
                spin.setValue(value)
        self.settings.apply(**EXERCISE)
        self.set_step(1)
        for start in (tr.start, self.one_layer.start):
            start()
            worker.settle(600)
        k.layer_spin.setValue(5)
        k.text_edit.setText("3 99 4")
        k.text_edit.setText(" ".join(["3 9 14 1 7 12 40 22 50 61 5 33 18 27 44 2"] * 2))
        k.layer_spin.setValue(1)
        worker.settle()
        super().exercise()
        self.set_step(1)
