"""The Inside a head panel's state and computation, Qt-free.

One state for every step: the model, the prompt, the head and the cell (counted from 1, as shown;
query 0 = the last token), and the target and foil of step 4. ``compute_head`` runs in the worker;
a prompt's run is kept (``KEPT_RUNS``), so another cell or head costs no forward pass.

    r = compute_head(HeadState(source=folder, layer=2, head=1, query=0, key=3))
    r.step.weight, r.split.query_totals.sum(), r.direct.values.sum()
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from core import head as inside
from core import models
from core.ablation_ranking import AblationRanking, AnswerToken, answer_token, check_pair, rank_by_ablation
from core.decoder import encode, pieces, visible
from core.loaded_models import shared as loaded_models

IOI_PROMPT = "When Mary and John went to the store, John gave a drink to"
KEPT_RUNS = 4
Progress = Callable[[int, int], None]
_runs: OrderedDict = OrderedDict()
_runs_lock = threading.Lock()


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


@dataclass(frozen=True)
class HeadResult:
    model: models.LoadedModel
    labels: tuple[str, ...]  # (T,) each token as shown
    step: inside.HeadStep  # step 1
    queries: np.ndarray  # (T, d) this head's queries, for the hover of any cell
    keys: np.ndarray  # (T, d)
    weights: np.ndarray  # (T, T) this head's weights
    split: inside.ScoreSplit | None  # step 2 (None: see why_not)
    writes: inside.Writes | None  # step 3
    direct: inside.DirectShares | None  # step 4 (also None without a target and a foil)
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
    run = inside.record(model, ids)
    with _runs_lock:
        _runs[key] = run
        while len(_runs) > KEPT_RUNS:
            _runs.popitem(last=False)
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


def compute_head(s: HeadState, progress: Progress | None = None) -> HeadResult:
    """Every step's numbers for the cell of ``s``; ValueError saying what to change."""
    model = loaded_models.get(s.source, progress)
    ids = read(model, s.prompt)
    rec = kept_run(model, ids)
    layer, head = s.layer - 1, s.head - 1
    query = (s.query or len(ids)) - 1
    step = inside.head_step(rec, layer, head, query, s.key - 1)
    target, foil = _answers(model, s)
    split = writes = direct = None
    try:
        inside.check_split(rec)
    except ValueError as exc:
        why_not = str(exc)
    else:
        why_not = ""
        split = inside.why_here(rec, layer, head, query, s.key - 1)
        writes = inside.what_it_writes(rec, layer, head, query, s.key - 1)
        direct = inside.direct_shares(rec, target.id, foil.id) if target is not None else None
    notices = [t.notice for t in (target, foil) if t is not None and t.notice]
    return HeadResult(
        model=model,
        labels=tuple(visible(p) for p in pieces(model, ids)),
        step=step,
        queries=rec.q[layer][head].numpy().astype(np.float64),
        keys=rec.k[layer][rec.kv_head(head)].numpy().astype(np.float64),
        weights=rec.weights[layer][head].numpy().astype(np.float64),
        split=split,
        writes=writes,
        direct=direct,
        target=target,
        foil=foil,
        why_not=why_not,
        notices=tuple(notices),
    )


def per_head(names: tuple[str, ...], values: np.ndarray, layers: int, heads: int) -> np.ndarray:
    """(layers, heads + 1): the values named "L1 H1"… and "L1 MLP"… as a grid, NaN where absent."""
    grid = np.full((layers, heads + 1), np.nan)
    for name, value in zip(names, values, strict=True):
        layer, _, what = name.partition(" ")
        if layer.startswith("L") and layer[1:].isdigit() and int(layer[1:]) <= layers:
            grid[int(layer[1:]) - 1, heads if what == "MLP" else int(what[1:]) - 1] = value
    return grid


def compute_knockout(s: HeadState, progress: Progress | None = None) -> AblationRanking:
    """Every head knocked out alone: the drop in logit(target) − logit(foil) (its total effect)."""
    model = loaded_models.get(s.source, expect=models.DECODER)
    target, foil = _answers(model, s)
    if target is None or foil is None:
        raise ValueError("Name a target and a foil token first, e.g. Mary and John.")
    return rank_by_ablation(model.module, read(model, s.prompt), target, foil, progress=progress)
