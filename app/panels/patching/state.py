"""The Patching panel's state and computations, Qt-free.

One state is shared by every step: the pair, the direction, the step on screen (``view``) and
every choice its drawing reads. Its compute (in the worker) loads the decoder, checks the pair,
runs both prompts and sweeps the grids the view shows, handing back the result after each batch
of cells (``partial``); whole grids are kept in the model's shared analysis for every step.

    r = compute_pair(PairState(source=folder, view="stream"), partial=print)
    r.grids["resid"], r.missing          # the Grid so far; the grids still to come
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, replace
from types import SimpleNamespace

import numpy as np

from core import models
from core.interp.ablation import run
from core.interp.analysis import analysis_of
from core.interp.attribution import Attribution, attribute
from core.interp.patching import PAIRS, Grid, PatchPair, cell_logits, check_ends, labels, patch, prepare
from core.interp.ranking import AblationRanking
from core.models.loaded import shared as loaded_models

SMOLLM2 = "smollm2"
KEPT = 24  # whole grids kept for the steps to share
Progress = Callable[[int, int], None]
TOP = 6  # next-token candidates listed


VIEWS = ("runs", "stream", "parts", "heads", "approx")  # the steps, in order
EXACT = {"resid": "residual stream", "attn": "attention outputs", "mlp": "MLP outputs", "heads": "heads"}


@dataclass(frozen=True)
class PairState:
    source: str = SMOLLM2
    clean: str = PAIRS["Names (IOI)"][0]
    corrupt: str = PAIRS["Names (IOI)"][1]
    target: str = "Mary"
    foil: str = "John"
    direction: str = "denoise"
    view: str = "runs"  # the step on screen (VIEWS): the grids its compute sweeps
    grid: str = "resid"  # the exact grid step 5 sets beside the estimate (EXACT)
    layer: int = 0  # step 4's chosen head from 1; layer 0: the head patching ranks first
    head: int = 1
    row: int = 0  # step 2's clicked cell from 1 (row 1: the embeddings); 0: none
    column: int = 0

    @property
    def wanted(self) -> tuple[str, ...]:
        """The grids the view shows, in the order they are swept."""
        return {
            "runs": (),
            "stream": ("resid",),
            "parts": ("attn", "mlp"),
            "heads": ("heads", "knockout", "head"),
            "approx": ("approx", self.grid),
        }[self.view]


@dataclass(frozen=True)
class PairResult:
    state: PairState
    model: models.LoadedModel
    pair: PatchPair
    clean: float  # logit(target) − logit(foil) of the clean run
    corrupt: float  # of the corrupted run
    clean_top: list[tuple[str, float]]  # the clean run's most probable next tokens
    corrupt_top: list[tuple[str, float]]
    grids: dict[str, Grid | AblationRanking | Attribution] = field(default_factory=dict)  # so far
    missing: tuple[str, ...] = ()  # the view's grids not whole yet (nan cells, or not begun)
    chosen: tuple[int, int] | None = None  # step 4's head (layer, head from 0), once known
    cell_top: list[tuple[str, float]] | None = None  # the next tokens of step 2's clicked cell


def decoder(source: str, progress: Progress | None = None) -> models.LoadedModel:
    return loaded_models.get(source, progress, expect=models.DECODER)


def top_tokens(model: models.LoadedModel, logits: np.ndarray, k: int = TOP) -> list[tuple[str, float]]:
    """The ``k`` most probable next tokens under ``logits`` (vocab,) as (text, probability)."""
    probs = np.exp(logits - logits.max())
    probs /= probs.sum()
    order = np.argsort(-probs)[:k]
    return [(model.tokenizer.decode([int(i)]), float(probs[i])) for i in order]


def compute_pair(
    s: PairState, progress: Progress | None = None, partial: Callable[[PairResult], None] | None = None
) -> PairResult:
    """The pair as the model reads it, both runs' metrics and predictions, and the grids of the
    view, each whole one kept; ``partial`` gets the result after each batch of cells (the grids
    so far, ``missing`` naming those to come). ValueError saying what to change."""
    if s.view not in VIEWS or s.grid not in EXACT:
        raise ValueError(f"The Patching panel has no step {s.view!r} or grid {s.grid!r}.")
    model = decoder(s.source, progress)
    pair = prepare(model, s.clean, s.corrupt, s.target, s.foil)
    if s.layer and not (s.layer <= model.n_layers and 1 <= s.head <= model.n_heads):
        raise ValueError(
            f"Layer {s.layer}, head {s.head} does not exist: {model.name} has layers 1 to "
            f"{model.n_layers} and heads 1 to {model.n_heads} (layer 0: the head patching ranks first)."
        )
    analysis = analysis_of(model)
    logits = analysis.once("pair runs", (pair.clean, pair.corrupt), lambda: _last_logits(model, pair))
    m_clean, m_corrupt = (float(x[pair.target.id] - x[pair.foil.id]) for x in logits)
    check_ends(m_clean, m_corrupt)
    r = PairResult(s, model, pair, m_clean, m_corrupt, *(top_tokens(model, x) for x in logits))
    key = (pair.clean, pair.corrupt, pair.target.id, pair.foil.id, s.direction)
    if s.view == "stream" and s.row:
        r = replace(r, cell_top=analysis.once("patched cell", (*key, s.row, s.column), lambda: _picked(r)))
    chosen = (s.layer - 1, s.head - 1) if s.layer else None
    grids = {}
    for what in s.wanted:  # what is kept already: drawn at once
        if chosen is None and "heads" in grids:
            chosen = _first(grids["heads"])
        found = analysis.kept("patching", (*key, what) if what != "head" else (*key, what, chosen))
        if found is not None:
            grids[what] = found
    order = [w for w in s.wanted if w not in grids]
    total = sum(_cells(r, w) for w in order)
    done = 0

    def settled() -> PairResult:
        missing = tuple(w for w in s.wanted if w not in grids or _unfinished(grids[w]))
        return replace(r, grids=dict(grids), missing=missing, chosen=chosen)

    if order and partial is not None:
        partial(settled())
    for what in order:
        if what == "head" and chosen is None:
            continue  # layer 0 and the heads grid not whole: no head to sweep

        def tick(d: int, _t: int, before=done) -> None:
            if progress is not None:
                progress(before + d, total)

        def arrived(grid: Grid, what=what) -> None:
            grids[what] = grid
            if partial is not None:
                partial(settled())

        grids[what] = _grid(analysis, r, key, what, chosen, tick, arrived)
        if what == "heads" and chosen is None:
            chosen = _first(grids["heads"])
        done += _cells(r, what)
        if partial is not None and what != order[-1]:
            partial(settled())
    return settled()


def _grid(analysis, r: PairResult, key: tuple, what: str, chosen, tick: Progress, arrived) -> object:
    """The whole ``what`` grid of the pair, kept: exact cells, the knock-out ranking (every head
    knocked out alone, zero-ablation, as Inside a decoder ranks them) or the estimate."""
    s, pair = r.state, r.pair
    if what == "knockout":
        scaled = lambda d, t: tick(d * _cells(r, what) // t, 0)  # noqa: E731  (layers -> heads)
        compute = lambda: analysis.ranking(pair.clean, pair.target, pair.foil, progress=scaled)  # noqa: E731
    elif what == "approx":
        compute = lambda: attribute(r.model, pair, s.direction)  # noqa: E731
    else:
        head = chosen if what == "head" else None
        compute = lambda: patch(r.model, pair, what, s.direction, head, tick, arrived)  # noqa: E731
    return analysis.once("patching", (*key, what) if what != "head" else (*key, what, chosen), compute, KEPT)


def _last_logits(model: models.LoadedModel, pair: PatchPair) -> tuple[np.ndarray, np.ndarray]:
    """(vocab,) float64 logits after the last token of the clean and of the corrupted prompt."""
    return tuple(run(model, ids)[0][-1].astype(np.float64) for ids in (pair.clean, pair.corrupt))


def _first(heads: Grid) -> tuple[int, int] | None:
    """The head whose output brings most back, once every head is patched."""
    if _unfinished(heads):
        return None
    best = np.unravel_index(int(np.argmax(heads.values)), heads.values.shape)
    return int(best[0]), int(best[1])


def _unfinished(grid: object) -> bool:
    return isinstance(grid, Grid) and bool(np.isnan(grid.raw).any())


def _cells(r: PairResult, what: str) -> int:
    layers, heads = r.model.n_layers, r.model.n_heads
    if what in ("knockout", "approx"):
        return layers * heads
    rows, columns = labels(r.pair, SimpleNamespace(layers=layers, heads=heads), what)
    return len(rows) * len(columns)


def _picked(r: PairResult) -> list[tuple[str, float]] | None:
    """The next tokens of the run step 2's clicked cell stands for; None for a cell outside this
    pair's grid (a shorter prompt)."""
    s = r.state
    rows, columns = labels(r.pair, SimpleNamespace(layers=r.model.n_layers, heads=r.model.n_heads), "resid")
    if not (1 <= s.row <= len(rows) and 1 <= s.column <= len(columns)):
        return None
    logits = cell_logits(r.model, r.pair, "resid", (s.row - 1, s.column - 1), s.direction)
    return top_tokens(r.model, logits)
