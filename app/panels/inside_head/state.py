"""The Inside a head panel's state and computation, Qt-free.

One state for every step: the model, the prompt, the head and the cell (counted from 1, as shown;
query 0 = the last token), and the target and foil of step 4. Two computes run in the worker on
it: ``compute_head`` (step 1, a few milliseconds once the prompt has run) and ``compute_parts``
(steps 2–4). A prompt's run is kept (``KEPT_RUNS``), so another cell or head costs no forward pass.

    s = HeadState(source=folder, layer=2, head=1, query=0, key=3)
    compute_head(s).step.weight
    p = compute_parts(s); p.split.query_totals.sum(), p.direct.values.sum()
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from core import models
from core.interp import head as inside
from core.interp.analysis import analysis_of
from core.interp.head.step import check_cell
from core.interp.prediction import encode, pieces, visible
from core.interp.ranking import AblationRanking, AnswerToken, answer_token, check_pair
from core.models.loaded import shared as loaded_models

IOI_PROMPT = "When Mary and John went to the store, John gave a drink to"
KEPT_RUNS = 4
Progress = Callable[[int, int], None]
_runs: OrderedDict = OrderedDict()
_runs_lock = threading.Lock()
_pending: dict[tuple, threading.Lock] = {}  # a run being made: a second caller waits for it
CELL = ("source", "prompt", "layer", "head", "query", "key")  # what step 1 depends on


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
class HeadResult:
    """Step 1."""

    model: models.LoadedModel
    labels: tuple[str, ...]  # (T,) each token as shown
    step: inside.HeadStep
    queries: np.ndarray  # (T, d) this head's queries, for the hover of any cell
    keys: np.ndarray  # (T, d)
    weights: np.ndarray  # (T, T) this head's weights


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
    notices: tuple[str, ...]


def kept_run(model: models.LoadedModel, ids: tuple[int, ...]) -> inside.Recorded:
    """The recorded run of ``ids``, made once and kept for the last KEPT_RUNS prompts."""
    key = (id(model.module), ids)
    with _runs_lock:
        if key in _runs:
            _runs.move_to_end(key)
            return _runs[key]
        pending = _pending.setdefault(key, threading.Lock())
    with pending:
        with _runs_lock:
            if key in _runs:
                return _runs[key]
        run = inside.record(model, ids)
        with _runs_lock:
            _runs[key] = run
            while len(_runs) > KEPT_RUNS:
                _runs.popitem(last=False)
            _pending.pop(key, None)
    return run


def read(model: models.LoadedModel, text: str) -> tuple[int, ...]:
    """Token ids of ``text`` as this model reads it (an encoder adds its special tokens)."""
    if model.kind == models.DECODER:
        return tuple(encode(model, text)[0])
    if not text.strip():
        raise ValueError("Type some text first: the model needs at least one word.")
    return tuple(model.tokenizer(text, truncation=True, max_length=model.max_tokens)["input_ids"])


def _answers(model, s: HeadState) -> tuple[AnswerToken | None, AnswerToken | None]:
    if model.kind != models.DECODER or not (s.target.strip() and s.foil.strip()):
        return None, None
    target, foil = (
        answer_token(model.tokenizer, s.target, s.prompt),
        answer_token(model.tokenizer, s.foil, s.prompt),
    )
    check_pair(target, foil)
    return target, foil


def _cell(s: HeadState, progress: Progress | None = None):
    """(model, ids, run, layer, head, query, key) of ``s``, 0-based; ValueError for a bad cell."""
    model = loaded_models.get(s.source, progress)
    ids = read(model, s.prompt)
    rec = kept_run(model, ids)
    cell = (s.layer - 1, s.head - 1, (s.query or len(ids)) - 1, s.key - 1)
    check_cell(rec, *cell)
    return model, ids, rec, *cell


def compute_head(s: HeadState, progress: Progress | None = None) -> HeadResult:
    """Step 1 for the cell of ``s``; ValueError saying what to change."""
    model, ids, rec, layer, head, query, key = _cell(s, progress)
    return HeadResult(
        model=model,
        labels=tuple(visible(p) for p in pieces(model, ids)),
        step=inside.head_step(rec, layer, head, query, key),
        queries=rec.q[layer][head].numpy().astype(np.float64),
        keys=rec.k[layer][rec.kv_head(head)].numpy().astype(np.float64),
        weights=rec.weights[layer][head].numpy().astype(np.float64),
    )


def compute_parts(s: HeadState, progress: Progress | None = None) -> PartsResult:
    """Steps 2–4 for the cell of ``s``; for a model they do not read, why not (``why_not``). With
    ``knockout``, every head knocked out alone (``progress`` counts the layers), kept per answer."""
    model, ids, rec, layer, head, query, key = _cell(s, progress)
    target, foil = _answers(model, s)
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
    notices = [t.notice for t in (target, foil) if t is not None and t.notice]
    notices += [direct.note] if direct is not None and direct.note else []  # Gemma 2's final cap
    return PartsResult(model, layer, split, writes, direct, knocked, target, foil, why_not, tuple(notices))


def per_head(names: tuple[str, ...], values: np.ndarray, layers: int, heads: int) -> np.ndarray:
    """(layers, heads + 1): the values named "L1 H1"… and "L1 MLP"… as a grid, NaN where absent."""
    grid = np.full((layers, heads + 1), np.nan)
    for name, value in zip(names, values, strict=True):
        layer, _, what = name.partition(" ")
        if layer.startswith("L") and layer[1:].isdigit() and int(layer[1:]) <= layers:
            grid[int(layer[1:]) - 1, heads if what == "MLP" else int(what[1:]) - 1] = value
    return grid
