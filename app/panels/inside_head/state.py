"""The Inside a head panel's state and computation, Qt-free.

One state for every step: the model, the prompt, the head and the cell (counted from 1, as shown;
query 0 = the last token), and the target and foil of step 4. One compute runs in the worker:
``compute_inside`` hands back step 1 first (a few milliseconds once the prompt has run), then
steps 2–4 in its ``parts``. A prompt's run is kept in the model's shared analysis, so another
cell or head costs no forward pass.

    s = HeadState(source=folder, layer=2, head=1, query=0, key=3)
    r = compute_inside(s)
    r.step.weight, r.parts.split.query_totals.sum(), r.parts.direct.values.sum()
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace

import numpy as np

from core import models
from core.interp import head as inside
from core.interp.analysis import analysis_of
from core.interp.head.step import check_cell
from core.interp.prediction import cut_note, encode
from core.interp.ranking import AblationRanking, AnswerToken, answer_pair
from core.interp.token_text import pieces, visible
from core.models.loaded import shared as loaded_models

IOI_PROMPT = "When Mary and John went to the store, John gave a drink to"
KEPT_RUNS = 4  # prompts whose recorded run is kept
Progress = Callable[[int, int], None]


@dataclass(frozen=True)
class HeadState:
    source: str = "smollm2"
    prompt: str = IOI_PROMPT
    layer: int = 25  # from 1; SmolLM2's layer 25, head 5 puts 0.81 of " to" on " Mary"
    head: int = 5
    query: int = 0  # from 1; 0 = the last token
    key: int = 2
    target: str = "Mary"
    foil: str = "John"
    knockout: bool = False  # step 4: every head knocked out alone too (one run per layer, kept)


@dataclass(frozen=True)
class PartsResult:
    """Steps 2–4."""

    model: models.LoadedModel
    layer: int  # 0-based, the head's
    split: inside.ScoreSplit | None  # step 2 (None: see why_not)
    writes: inside.Writes | None  # step 3
    direct: inside.DirectShares | None  # step 4 (also None without a target and a foil)
    knocked: AblationRanking | None  # step 4, when asked for: each head knocked out alone
    target: AnswerToken | None
    foil: AnswerToken | None
    why_not: str  # why steps 2–4 are not shown for this model, or ""
    unanswered: str  # why step 4 cannot judge this target and foil, or ""
    notices: tuple[str, ...]


@dataclass(frozen=True)
class HeadResult:
    """Step 1, and steps 2–4 in ``parts`` once computed."""

    model: models.LoadedModel
    labels: tuple[str, ...]  # (T,) each token as shown
    step: inside.HeadStep
    queries: np.ndarray  # (T, d) this head's queries, for the hover of any cell
    keys: np.ndarray  # (T, d)
    weights: np.ndarray  # (T, T) this head's weights
    cut: str  # what a text longer than the model reads lost, or ""
    parts: PartsResult | None = None  # steps 2–4, once computed


def read(model: models.LoadedModel, text: str) -> tuple[tuple[int, ...], str]:
    """Token ids of ``text`` as this model reads it (an encoder adds its special tokens), and what
    a cut lost ("" when whole): a decoder keeps its first special token and its last tokens, an
    encoder its first tokens and its closing one."""
    if model.kind == models.DECODER:
        ids, dropped = encode(model, text)
        return tuple(ids), cut_note(model, ids, dropped)
    if not text.strip():
        raise ValueError("Type some text first: the model needs at least one word.")
    whole = len(model.tokenizer(text)["input_ids"])
    ids = tuple(model.tokenizer(text, truncation=True, max_length=model.max_tokens)["input_ids"])
    cut = (
        f"The text is {whole:,} tokens; {model.name} reads {len(ids)}: the rest was dropped."
        if whole > len(ids)
        else ""
    )
    return ids, cut


def _answers(model, s: HeadState) -> tuple[AnswerToken | None, AnswerToken | None]:
    if model.kind != models.DECODER or not (s.target.strip() and s.foil.strip()):
        return None, None
    return answer_pair(model.tokenizer, s.target, s.foil, s.prompt)


def _cell(s: HeadState, progress: Progress | None = None):
    """(model, ids, what a cut lost, run, layer, head, query, key) of ``s``, 0-based; ValueError for
    a bad cell."""
    model = loaded_models.get(s.source, progress)
    ids, cut = read(model, s.prompt)
    rec = analysis_of(model).once("recorded", ids, lambda: inside.record(model, ids), KEPT_RUNS)
    cell = (s.layer - 1, s.head - 1, (s.query or len(ids)) - 1, s.key - 1)
    check_cell(rec, *cell)
    return model, ids, cut, rec, *cell


def compute_inside(
    s: HeadState, progress: Progress | None = None, partial: Callable[[HeadResult], None] | None = None
) -> HeadResult:
    """Every step for the cell of ``s``; ValueError saying what to change. Step 1 goes to
    ``partial`` before steps 2–4 are computed, unless the knock-out is asked for (then a cancel
    finds the state on screen as it was, the box unticked)."""
    model, ids, cut, rec, layer, head, query, key = _cell(s, progress)
    try:
        target, foil = _answers(model, s)
        unanswered = ""
    except ValueError as exc:  # a pair this model cannot judge: step 4 says why, the others show
        target = foil = None
        unanswered = str(exc)
    result = HeadResult(
        model=model,
        labels=tuple(visible(p) for p in pieces(model, ids)),
        step=inside.head_step(rec, layer, head, query, key),
        queries=rec.q[layer][head].numpy().astype(np.float64),
        keys=rec.k[layer][rec.kv_head(head)].numpy().astype(np.float64),
        weights=rec.weights[layer][head].numpy().astype(np.float64),
        cut=cut,
    )
    if partial is not None and not s.knockout:
        partial(result)
    split = writes = direct = knocked = None
    try:
        inside.check_split(rec)
    except ValueError as exc:
        why_not = str(exc)
    else:
        why_not = ""
        split = inside.why_here(rec, layer, head, query, key)
        writes = inside.what_it_writes(rec, layer, head, query, key)
        direct = inside.direct_shares(rec, target.id, foil.id) if target is not None else None
        if s.knockout and target is not None:
            knocked = analysis_of(model).ranking(ids, target, foil, progress=progress)
    notices = [direct.note] if direct is not None and direct.note else []  # Gemma 2's final cap
    parts = PartsResult(
        model, layer, split, writes, direct, knocked, target, foil, why_not, unanswered, tuple(notices)
    )
    return replace(result, parts=parts)


def per_head(names: tuple[str, ...], values: np.ndarray, layers: int, heads: int) -> np.ndarray:
    """(layers, heads + 1): the values named "L1 H1"… and "L1 MLP"… as a grid, NaN where absent."""
    grid = np.full((layers, heads + 1), np.nan)
    for name, value in zip(names, values, strict=True):
        layer, _, what = name.partition(" ")
        if layer.startswith("L") and layer[1:].isdigit() and int(layer[1:]) <= layers:
            grid[int(layer[1:]) - 1, heads if what == "MLP" else int(what[1:]) - 1] = value
    return grid
