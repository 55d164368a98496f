"""The Next token panel's text and every way it grows, which its steps call directly.

    writing = Writing()
    writing.run.apply(model=m)    # prefill (worker); the text starts again from it
    writing.append_sample()       # one decode step with a token drawn by step 2's settings
    writing.auto.apply(on=True)   # keep appending, one decode step after another, until stopped

Live states (state.py) and one switch: the run (model + prompt, prefilled in the worker), the
text (the run's generation grown one decode step at a time in the worker: each step a new
Generation, never one changed after it is shown; on Auto, one compute appends token after token,
each landing as it comes), the sampling settings (checked on the UI thread, never running the
model), a decode step's timing, and Auto. Auto stops at the end-of-text token, a full context, a
new run and any refusal; it waits while a timing runs, so nothing runs beside the timing.
"""

from __future__ import annotations

from dataclasses import dataclass

from PySide6.QtCore import QObject

from app.panels.next_token.state import (
    DrawStreams,
    RunState,
    SamplingState,
    TextState,
    TimingState,
    compute_run,
    compute_sampling,
    compute_timing,
    ended,
    snapshot,
    write,
)
from app.panels.step import Live
from core.interp import prediction
from core.interp.prediction import context_limit
from core.interp.token_text import visible


@dataclass(frozen=True)
class AutoState:
    on: bool = False  # append one drawn token after another


class Writing(QObject):
    def __init__(self):
        super().__init__()
        self.run = Live(RunState(), compute_run, background=True)
        self.text = Live(TextState(), write, background=True)
        self.sampling = Live(SamplingState(), compute_sampling)
        self.auto = Live(AutoState(), lambda s: s)
        self.timing = Live(TimingState(), compute_timing, background=True, start=False)
        self.streams = DrawStreams()
        self.run.changed.connect(self._restart)
        self.text.changed.connect(self._ended)
        for live in (self.auto, self.sampling):
            live.changed.connect(self._drive)
        self.timing.busy.connect(lambda _on: self._drive())
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
        """A run, a decode step (or Auto's steps) or a timing is running."""
        return any(live.task is not None for live in (self.run, self.text, self.timing))

    def snapshot(self):
        """The shown generation's next token under the sampling settings (state.Snapshot), or None."""
        return None if self.generation is None else snapshot(self.generation, self.sampling.result)

    def stop(self, *_) -> None:
        """Auto off (it is already, or a run or a refusal stops it)."""
        if self.auto.state.on:
            self.auto.apply(on=False)

    def _restart(self) -> None:
        """A new prefill: the text starts again from it, and so do step 2's draws."""
        self.text.apply(run=self.run.state, generation=self.run.result, token=None, auto=False)
        self.streams.restart(self.sampling.state.seed)

    def _drive(self) -> None:
        """The text follows Auto and the sampling settings: on (once no timing runs), one compute
        writes token after token; off, the text stays where it got to."""
        on = self.auto.state.on and self.timing.task is None and self.generation is not None
        wanted = self.text.wanted
        if wanted.auto != on or (on and wanted.sampling != self.sampling.state):
            self.text.apply(generation=self.generation, token=None, auto=on, sampling=self.sampling.state)

    def _ended(self) -> None:
        """Auto goes off once the text has ended."""
        g = self.generation
        if self.auto.state.on and g is not None and ended(g) is not None:
            self.stop()

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
            self.text.apply(generation=g, token=(token, prob), auto=False)

    def undo(self) -> None:
        """Take the last appended token back (Auto stops)."""
        g = self.generation
        if self.run.task is None and self.timing.task is None and g is not None and g.undo() is not None:
            self.stop()
            self.text.apply(generation=g.undo(), token=None, auto=False)

    def measure(self) -> None:
        """Time one decode step at the current length, with and without the cache (in the worker)."""
        if not self.busy and self.generation is not None:
            self.timing.apply(generation=self.generation)
