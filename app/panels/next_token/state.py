"""The Next token panel's states and what they compute (Qt-free).

Two live states: ``RunState`` (the model and the prompt; computed in the worker: one prefill that
keeps the KV cache) and ``SamplingState`` (temperature, top-k, top-p, seed, how many candidates
to list; checked on the UI thread). Every step draws a ``Snapshot`` of both, which re-expresses
the current logits without running the model.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from core.interp import decode_timing, prediction
from core.interp.token_text import visible
from core.maths import sampling
from core.maths.sampling import Choice, Distribution, Draws

DEFAULT_PROMPT = "The capital of France is"


@dataclass(frozen=True)
class RunState:
    model: Any = None  # core.models.LoadedModel (a decoder), None until one is loaded
    prompt: str = DEFAULT_PROMPT


def compute_run(s: RunState, progress=None) -> prediction.Generation | None:
    """Prefill ``s.prompt``: every head's weights, the next-token logits and the KV cache."""
    if s.model is None:
        return None
    return prediction.Generation.start(s.model, prediction.predict(s.model, s.prompt, keep_cache=True))


@dataclass(frozen=True)
class SamplingState:
    temperature: float = 1.0
    top_k: int = 0  # 0: no cut
    top_p: float = 1.0
    seed: int = 0
    listed: int = 10  # candidates shown


def distribution(logits, s: SamplingState) -> Distribution:
    """The next token's distribution from ``logits`` under the settings ``s``."""
    return sampling.reshape(logits, s.temperature, s.top_k or None, s.top_p)


AUTO_PAUSE_S = 0.25  # Auto's pause before each decode step, so each token can be read


@dataclass(frozen=True)
class TextState:
    """The text every step shows: the run's prompt, grown by the tokens step 3 appends."""

    run: RunState = RunState()
    generation: prediction.Generation | None = None  # the generation shown; None: no model yet
    token: tuple[int, float] | None = None  # (id, probability) to append to it
    auto: bool = False  # then keep appending tokens drawn with ``sampling`` until the text ends
    sampling: SamplingState = SamplingState()


def write(s: TextState, progress=None, partial=None, wait=None) -> prediction.Generation | None:
    """``s.generation`` with ``s.token`` appended (one decode step: a new generation), or as it is;
    with ``auto``, then one drawn token after another, each after a pause (``wait``) and landing
    as it comes (``partial``), until the text ends. The k-th appended token takes the seed's k-th
    number, as the CLI's generation does."""
    g = s.generation
    if g is not None and s.token is not None:
        g = g.append(*s.token)
    if g is None or not s.auto:
        return g
    draws = sampling.Draws(s.sampling.seed)
    while ended(g) is None:
        if g is not s.generation:
            partial(g)
        wait(AUTO_PAUSE_S)
        g = g.append(*draws.draw(distribution(g.logits, s.sampling), len(g.chosen)))
    return g


def ended(generation: prediction.Generation) -> str | None:
    """Why no token can be appended to ``generation`` (its end-of-text token, a full context), or None."""
    if generation.chosen and generation.chosen[-1].id == generation.model.tokenizer.eos_token_id:
        return "The model chose its end-of-text token; undo it to go on."
    limit = prediction.context_limit(generation.model)
    if generation.length >= limit:
        return f"The context is full ({limit} tokens); undo a step or shorten the prompt."
    return None


@dataclass(frozen=True)
class TimingState:
    generation: prediction.Generation | None = None  # the text whose next decode step is timed


def compute_timing(s: TimingState, progress=None):
    """One decode step at the text's length timed with and without the KV cache (a DecodeTiming)."""
    g = s.generation
    return decode_timing.time_decode(g.model, g.ids, g.length)


def compute_sampling(s: SamplingState) -> SamplingState:
    """``s`` when every value is possible; ValueError saying why otherwise."""
    sampling.Settings(s.temperature, s.top_k or None, s.top_p).check()
    if s.listed < 1:
        raise ValueError("List at least one token.")
    return s


@dataclass(frozen=True)
class Snapshot:
    generation: prediction.Generation
    dist: Distribution  # the next token's distribution under the sampling settings
    plain: Distribution  # the same at temperature 1 with no cuts: the model's own probabilities
    choices: list[Choice]  # the most probable tokens under the settings, most probable first
    rest: float  # probability of every other token
    labels: list[str]  # visible text of each choice

    @property
    def model(self):
        return self.generation.model


def snapshot(generation: prediction.Generation, s: SamplingState) -> Snapshot:
    """The current next-token distribution of ``generation`` under the settings ``s``."""
    dist = distribution(generation.logits, s)
    choices, rest = sampling.top(dist, s.listed)
    labels = [visible(generation.model.tokenizer.decode([c.id])) for c in choices]
    return Snapshot(generation, dist, sampling.reshape(generation.logits), choices, rest, labels)


def context_notice(generation: prediction.Generation) -> tuple[str, str] | None:
    """A warning when the prompt was cut to fit, else None."""
    prompt = generation.prompt
    note = prediction.cut_note(generation.model, prompt.ids, prompt.dropped)
    return (note, "warning") if note else None


class DrawStreams:
    """The panel's seeded random streams: step 2's ``preview`` draws, started again with every run
    or setting, and one stream per prompt's generations, seeded when the first starts (or the
    seed changes), so the tokens appended for a prompt, settings and seed are
    ``predict --generate``'s."""

    def __init__(self):
        self.preview = Draws(0)
        self.appended = Draws(0)
        self._prompt = None  # the prefilled prompt whose generations ``appended`` draws for

    def restart(self, seed: int) -> None:
        self.preview = Draws(seed)

    def of(self, generation, seed: int) -> Draws:
        """The stream of the tokens appended to ``generation``'s prompt."""
        if self._prompt is not generation.prompt or self.appended.seed != seed:
            self.appended, self._prompt = Draws(seed), generation.prompt
        return self.appended
