"""The Next token panel's text and every way it grows, which its steps call directly.

    writing = Writing()
    writing.run.apply(model=m)    # prefill (worker); the text starts again from it
    writing.append_sample()       # one decode step with a token drawn by step 2's settings
    writing.auto.apply(on=True)   # keep appending, one decode step after another, until stopped

Three live states (state.py) and one switch: the run (model + prompt, prefilled in the worker),
the text (the run's generation grown one decode step at a time in the worker: each step a new
Generation, never one changed after it is shown), the sampling settings (checked on the UI
thread, never running the model) and Auto. Auto stops at the end-of-text token, a full context,
a new run and any refusal.
"""

from __future__ import annotations

from dataclasses import dataclass

from PySide6.QtCore import QObject, QTimer

from app import worker
from app.panels.next_token.state import (
    DrawStreams,
    RunState,
    SamplingState,
    TextState,
    compute_run,
    compute_sampling,
    grow,
    snapshot,
)
from app.panels.step import Live
from core.interp import decode_timing, prediction
from core.interp.prediction import context_limit
from core.interp.token_text import visible

AUTO_DELAY_MS = 250  # pause between automatic steps, so each one can be read


@dataclass(frozen=True)
class AutoState:
    on: bool = False  # append one drawn token after another


def ended(generation: prediction.Generation) -> str | None:
    """Why no token can be appended to ``generation`` (its end-of-text token, a full context), or None."""
    if generation.chosen and generation.chosen[-1].id == generation.model.tokenizer.eos_token_id:
        return "The model chose its end-of-text token; undo it to go on."
    limit = context_limit(generation.model)
    if generation.length >= limit:
        return f"The context is full ({limit} tokens); undo a step or shorten the prompt."
    return None


class Writing(QObject):
    def __init__(self):
        super().__init__()
        self.run = Live(RunState(), compute_run, background=True)
        self.text = Live(TextState(), grow, background=True)
        self.sampling = Live(SamplingState(), compute_sampling)
        self.auto = Live(AutoState(), lambda s: s)
        self.streams = DrawStreams()
        self.timing = worker.Newest()  # the KV cache step's timing of one decode step
        self.pace = QTimer(self, singleShot=True, interval=AUTO_DELAY_MS)  # one Auto step pending at most
        self.pace.timeout.connect(self._step)
        self.run.changed.connect(self._restart)
        self.text.changed.connect(self._next)
        self.auto.changed.connect(self._next)
        self.sampling.changed.connect(lambda: self.streams.restart(self.sampling.state.seed))
        self.run.busy.connect(lambda on: on and self.stop())
        for live in (self.run, self.text):
            live.failed.connect(self.stop)

    @property
    def model(self):
        return self.run.state.model

    @property
    def generation(self) -> prediction.Generation | None:
        """The generation every step shows (the prompt and the tokens appended to it)."""
        return self.text.result

    @property
    def busy(self) -> bool:
        """A run, a decode step or a timing is running."""
        return self.timing.running or self.run.task is not None or self.text.task is not None

    def snapshot(self):
        """The shown generation's next token under the sampling settings (state.Snapshot), or None."""
        return None if self.generation is None else snapshot(self.generation, self.sampling.result)

    def stop(self, *_) -> None:
        """Auto off (it is already, or a run or a refusal stops it)."""
        if self.auto.state.on:
            self.auto.apply(on=False)

    def _restart(self) -> None:
        """A new prefill: the text starts again from it, and so do step 2's draws."""
        self.text.apply(run=self.run.state, generation=self.run.result, token=None)
        self.streams.restart(self.sampling.state.seed)

    def _next(self) -> None:
        """On Auto, the next decode step after a pause, unless the text has ended."""
        g = self.generation
        if self.auto.state.on and g is not None and ended(g) is not None:
            self.stop()
        elif self.auto.state.on:
            self.pace.start()

    def _step(self) -> None:
        """Auto's decode step, once nothing else runs (a timing, say)."""
        if self.auto.state.on and self.busy:
            self.pace.start()
        elif self.auto.state.on:
            self.append_sample()

    def draw_preview(self) -> tuple[str, float] | None:
        """Step 2's seeded draw from the current distribution: (visible token, probability)."""
        snap = self.snapshot()
        if snap is None:
            return None
        token, prob = self.streams.preview.draw(snap.dist)
        return visible(self.model.tokenizer.decode([token])), prob

    def append_sample(self) -> None:
        """Append a token drawn with the settings; the k-th appended token takes the seed's k-th number."""
        snap = self.snapshot()
        if snap is not None and not self.busy:
            at = len(self.generation.chosen)
            self._append(*self.streams.of(self.generation, self.sampling.state.seed).draw(snap.dist, at))

    def append_choice(self, index: int) -> None:
        """Append the ``index``-th candidate under the settings (0: the most probable)."""
        snap = self.snapshot()
        if snap is not None and 0 <= index < len(snap.choices):
            self._append(snap.choices[index].id, snap.choices[index].prob)

    def _append(self, token: int, prob: float) -> None:
        g = self.generation
        if not self.busy and g is not None and g.length < context_limit(g.model):  # one step at a time
            self.text.apply(generation=g, token=(token, prob))

    def undo(self) -> None:
        """Take the last appended token back (Auto stops)."""
        g = self.generation
        if not self.busy and g is not None and g.undo() is not None:
            self.stop()
            self.text.apply(generation=g.undo(), token=None)

    def measure(self, on_result, on_error) -> None:
        """Time one decode step at the current length, with and without the cache (in the worker)."""
        g = self.generation
        if not self.busy and g is not None:
            self.timing.start(
                decode_timing.time_decode, g.model, g.ids, g.length, on_result=on_result, on_error=on_error
            )
