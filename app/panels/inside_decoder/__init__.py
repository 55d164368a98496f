"""Panel "Inside a decoder": knock heads out of SmolLM2 and watch the prediction change; rank
heads by effect and by attention; the logit lens; attention sinks; induction heads."""

from __future__ import annotations

from PySide6.QtWidgets import QFileDialog, QHBoxLayout, QLabel, QProgressBar, QPushButton, QWidget

from app.panels.base import Panel
from app.panels.inside_decoder.induction import InductionPage
from app.panels.inside_decoder.knock_out import KnockPage
from app.panels.inside_decoder.lens import LensPage
from app.panels.inside_decoder.sinks import SinkPage
from app.panels.inside_decoder.state import KnockState, compute_knock
from app.panels.inside_decoder.which_heads import RankPage
from app.panels.model_add import SmolLM2Adder
from app.panels.step import Live
from app.widgets.text import note
from core import smollm2


class InsideDecoderPanel(Panel):
    key = "inside_decoder"
    title = "Inside a decoder"
    steps = ("Knock out heads", "Which heads matter", "Logit lens", "Attention sinks", "Induction heads")

    def __init__(self, parent=None):
        super().__init__(parent)
        knock = Live(KnockState(), compute_knock, background=True)  # steps 1 and 2 share it
        self.knock = KnockPage(knock)
        self.rank = RankPage(knock)
        self.lens = LensPage()
        self.sinks = SinkPage()
        self.induction = InductionPage()
        self.model_info = note("Loading the decoder…")
        self.open_button = QPushButton("Open decoder folder…")
        self.adder = SmolLM2Adder(parent=self)  # the Next token panel's Add button, the same code
        self.add_button = self.adder.button
        self.add_progress = QProgressBar()
        self.add_progress.setMaximumWidth(160)
        self.cancel_button = QPushButton("Cancel")
        for widget in (self.add_progress, self.cancel_button):
            widget.hide()
        row = QHBoxLayout()
        row.addWidget(QLabel("Model"))
        row.addWidget(self.model_info, 1)
        for widget in (self.add_button, self.add_progress, self.cancel_button, self.open_button):
            row.addWidget(widget)
        self.body.addLayout(row)
        self.add_steps(self.knock, self.rank, self.lens, self.sinks, self.induction)
        self.open_button.clicked.connect(self.choose_folder)
        self.cancel_button.clicked.connect(self.cancel_add)
        self.adder.running.connect(self._adding)
        self.adder.progressed.connect(self._add_progressed)
        self.adder.added.connect(lambda: self.use_model(smollm2.KEY))
        self.adder.failed.connect(self._add_failed)
        knock.changed.connect(self._describe_model)
        for live in self.lives():
            live.failed.connect(self._no_model)  # after the message bar's slot: the offer replaces it
            live.busy.connect(self._busy)
        self.set_step(0)

    def lives(self) -> list[Live]:
        return [self.knock.live, self.lens.live, self.sinks.live, self.induction.live]

    def choose_folder(self) -> None:
        folder = QFileDialog.getExistingDirectory(self, "Open a decoder model folder")
        if folder:
            self.use_model(folder)

    def use_model(self, source: str) -> None:
        """Run every step on the decoder ``source`` ("smollm2" or a folder)."""
        for live in self.lives():
            live.apply(source=source)

    def _no_model(self, why: str) -> None:
        """No decoder yet: where SmolLM2 is missing, offer to add it here rather than naming a
        terminal command."""
        if self.knock.result is not None:
            return
        if self.adder.busy:
            self.model_info.setText("Adding SmolLM2…")
            return
        self.model_info.setText("No decoder loaded: see the message above.")
        if smollm2.ADD_HINT in why:
            self.show_message(*self.adder.offer())
        else:
            self.add_button.hide()

    def _adding(self, running: bool) -> None:
        self.add_progress.setRange(0, 0)
        self.add_progress.setVisible(running)
        self.cancel_button.setVisible(running)
        if running:
            self.clear_message()
            self.model_info.setText("Adding SmolLM2…")

    def _add_progressed(self, done: int, total: int) -> None:
        self.add_progress.setRange(0, total)
        self.add_progress.setValue(done)
        if self.adder.stage(done, total):
            self.model_info.setText(self.adder.stage(done, total))

    def _add_failed(self, message: str) -> None:
        self.model_info.setText("No decoder loaded: see the message above.")
        self.show_message(*self.adder.offer(message))

    def cancel_add(self) -> None:
        if self.adder.cancel():
            self.model_info.setText("No decoder loaded.")
            self.show_message("Adding the model was cancelled; nothing changed.", "info")

    def _describe_model(self) -> None:
        self.add_button.hide()
        m = self.knock.result.model
        kv = f", {m.n_kv_heads} key/value heads" if m.n_kv_heads != m.n_heads else ""
        origin = f" · {smollm2.ORIGIN}" if m.source == smollm2.KEY else ""
        self.model_info.setText(f"{m.name}: {m.n_layers} layers × {m.n_heads} heads{kv}{origin}")

    def _busy(self, running: bool) -> None:
        if running:
            self.model_info.setText(self.model_info.text().removesuffix(" (running…)") + " (running…)")
        elif not any(live.task is not None for live in self.lives()):
            self.model_info.setText(self.model_info.text().removesuffix(" (running…)"))

    def exercise(self) -> None:
        from app import worker

        k = self.knock
        for heads in (((0, 0),), ((0, 0), (29, 8)), ((99, 0),), ()):
            k.apply(heads=heads)
            worker.wait_idle()
        k.mode.setCurrentIndex(1)
        k.layer_button.click()
        worker.wait_idle()
        self.rank.target.setText("John")
        self.rank.target.setText("Mary")
        self.rank.foil.setText("")
        self.rank.foil.setText("John")
        self.lens.prompt.setText("")
        self.lens.prompt.setText(self.lens.state.prompt or "The capital of France is")
        self.induction.n.setValue(1)
        self.induction.n.setValue(20)
        super().exercise()
        worker.wait_idle()

    def export(self) -> dict[str, QWidget]:
        return {
            "knocked": self.knock.grid,
            "before": self.knock.before,
            "after": self.knock.after,
            "effect": self.rank.effect_map,
            "weight": self.rank.weight_map,
            "lens": self.lens.grid,
            "rank": self.lens.rank_plot,
            "sinks": self.sinks.grid,
            "induction": self.induction.induction_map,
            "previous": self.induction.previous_map,
            "losses": self.induction.loss_plot,
        }
