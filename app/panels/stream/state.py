"""The residual stream panel's states and computations, Qt-free.

Steps 1–3 read one state (the prompt, the token, the layer whose norm step 2 writes out, how step 3
groups the parts); step 4, steering, has its own prompt and vector. Both compute in the worker.
Layers and positions are counted from 1 as on screen; 0 means the last token, or the final norm.

    r = compute_stream(StreamState(source=folder, position=0, norm=3))
    r.journey.rows, r.norm.scale, r.groups.values          # steps 1, 2, 3
    s = compute_steer(SteerState(source=folder, layer=2, strength=4.0))
    s.normal.ids, s.steered.ids, s.sweep.entropy           # step 4
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from core import models
from core.interp import stream
from core.interp.analysis import analysis_of
from core.interp.prediction import cut_note, encode
from core.interp.ranking import answer_token
from core.interp.steering import (
    PREFIX,
    Generated,
    SteeringVector,
    StrengthSweep,
    greedy,
    steer,
    steering_vector,
    strength_sweep,
)
from core.interp.token_text import pieces, visible
from core.models.loaded import shared as loaded_models

IOI_PROMPT = "When Mary and John went to the store, John gave a drink to"
STEER_PROMPT = "I went up to my friend and said"
SWEEP_POINTS = 21  # strengths from 0 to the state's reach
Progress = Callable[[int, int], None]


@dataclass(frozen=True)
class StreamState:
    source: str = "smollm2"
    prompt: str = IOI_PROMPT
    position: int = 0  # from 1; 0 = the last token
    norm: int = 1  # the layer whose norm step 2 writes out, from 1; 0 = the final norm
    group: str = "layer"  # step 3's rows: one of core.interp.stream.GROUPS


@dataclass(frozen=True)
class StreamResult:
    model: models.LoadedModel
    labels: tuple[str, ...]  # (T,) the tokens as shown
    journey: stream.StreamJourney  # step 1, and the parts of step 3
    lens: tuple[str, ...]  # (layers,) the lens's top token after each block, as shown
    norm: stream.NormStep  # step 2
    top: tuple[str, ...]  # (K,) the tokens step 3's direct effects land on, as shown
    effects: stream.DirectEffects
    groups: stream.PartGroups  # step 3's rows
    cut: str  # what a prompt longer than the context lost (core.interp.prediction.cut_note), or ""


def compute_stream(s: StreamState, progress: Progress | None = None) -> StreamResult:
    """Steps 1–3 for the token of ``s``; ValueError saying what to change."""
    model = loaded_models.get(s.source, progress, expect=models.DECODER)
    ids, dropped = encode(model, s.prompt)
    if not 0 <= s.position <= len(ids):
        raise ValueError(f"Token {s.position} does not exist: the prompt has tokens 1 to {len(ids)}.")
    if not 0 <= s.norm <= model.n_layers:
        raise ValueError(f"Layer {s.norm} does not exist: this model has layers 1 to {model.n_layers}.")
    position = (s.position or len(ids)) - 1
    journey = stream.stream_journey(model, ids, position)
    effects = stream.direct_effects(model, journey)
    piece = model.tokenizer.decode
    return StreamResult(
        model=model,
        labels=tuple(visible(p) for p in pieces(model, ids)),
        journey=journey,
        lens=tuple(visible(piece([row.lens_top])) for row in journey.rows),
        norm=stream.norm_step(model, ids, position, (s.norm or model.n_layers + 1) - 1),
        top=tuple(visible(piece([t])) for t in effects.tokens),
        effects=effects,
        groups=stream.grouped(journey, effects, s.group),
        cut=cut_note(model, ids, dropped),
    )


@dataclass(frozen=True)
class SteerState:
    source: str = "smollm2"
    prompt: str = STEER_PROMPT
    plus: str = " food"  # the default pair, layer and strength: chosen by measurement (stream.md, step 4)
    minus: str = " sports"
    prefix: str = PREFIX
    layer: int = 10  # from 1: the stream leaving this block
    strength: float = 0.4
    mode: str = "add"  # or "remove" the vector's direction
    new: int = 20  # tokens generated
    reach: float = 2.0  # the sweep's strengths run from 0 to this
    token: str = ""  # the next token the sweep follows; "": the normal completion's first


@dataclass(frozen=True)
class SteerResult:
    model: models.LoadedModel
    vector: SteeringVector
    normal: Generated
    steered: Generated
    normal_pieces: tuple[str, ...]  # the new tokens as shown
    steered_pieces: tuple[str, ...]
    sweep: StrengthSweep | None  # None when the reach is 0 or the mode removes
    token: str  # the token the sweep follows, as shown
    cut: str  # what a prompt longer than the context lost, or ""


def compute_steer(s: SteerState, progress: Progress | None = None) -> SteerResult:
    """Step 4: the normal and the steered completions and the strength sweep. The vector, the
    normal completion and the sweep are kept per model, so a new strength runs only the steered
    completion; ``progress`` counts tokens, then strengths."""
    model = loaded_models.get(s.source, progress, expect=models.DECODER)
    if not s.prompt.strip():
        raise ValueError("Type a prompt for the model to continue.")
    ids, dropped = encode(model, s.prompt)
    ids = tuple(ids)
    kept = analysis_of(model).once
    vector = kept(
        "steer vector",
        (s.plus, s.minus, s.layer, s.prefix),
        lambda: steering_vector(model, s.plus, s.minus, s.layer - 1, s.prefix),
    )
    edits = steer(vector, s.strength, s.mode)  # refuses a strength that is not finite
    points = SWEEP_POINTS if s.reach and s.mode == "add" else 0  # the sweep varies what is added
    total = 2 * s.new + points
    tick = progress or (lambda done, all_: None)

    def at(offset: int) -> Progress:
        return lambda done, _: tick(offset + done, total)

    normal = kept("steer normal", (ids, s.new), lambda: greedy(model, ids, s.new, progress=at(0)))
    steered = greedy(model, ids, s.new, edits, at(s.new))
    token = (
        normal.ids[0] if not s.token.strip() else answer_token(model.tokenizer, s.token, s.prompt, "Token").id
    )
    sweep = None
    if points:
        key = (ids, s.plus, s.minus, s.layer, s.prefix, s.reach, token)
        strengths = np.linspace(0.0, s.reach, points)
        sweep = kept(
            "steer sweep", key, lambda: strength_sweep(model, ids, vector, strengths, token, at(2 * s.new))
        )
    tick(total, total)
    piece = model.tokenizer.decode
    return SteerResult(
        model=model,
        vector=vector,
        normal=normal,
        steered=steered,
        normal_pieces=tuple(visible(piece([t])) for t in normal.ids),
        steered_pieces=tuple(visible(piece([t])) for t in steered.ids),
        sweep=sweep,
        token=visible(piece([token])),
        cut=cut_note(model, ids, dropped),
    )
