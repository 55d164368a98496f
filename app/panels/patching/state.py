"""The Patching panel's state and computations, Qt-free.

One state, the pair, is shared by every step; its compute (in the worker) loads the decoder,
checks the pair and runs both prompts. The exact sweeps and the one-pass approximation
(attribution patching) run in the worker when a step asks for them, cells filling in.

    r = compute_pair(PairState(source=folder))
    sweep(r, ("resid", "approx"), progress=…, partial=…)   # {"resid": Grid, "approx": Attribution}
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from types import SimpleNamespace

import numpy as np

from core import models
from core.interp.ablation import run
from core.interp.attribution import Attribution, attribute
from core.interp.patching import PAIRS, Grid, PatchPair, cell_logits, check_ends, labels, patch, prepare
from core.interp.ranking import AblationRanking, rank_by_ablation
from core.models.loaded import shared as loaded_models

SMOLLM2 = "smollm2"
Progress = Callable[[int, int], None]
TOP = 6  # next-token candidates listed


@dataclass(frozen=True)
class PairState:
    source: str = SMOLLM2
    clean: str = PAIRS["Names (IOI)"][0]
    corrupt: str = PAIRS["Names (IOI)"][1]
    target: str = "Mary"
    foil: str = "John"
    direction: str = "denoise"

    @property
    def key(self) -> tuple:
        """What an exact sweep depends on."""
        return (self.source, self.clean, self.corrupt, self.target, self.foil, self.direction)


@dataclass(frozen=True)
class PairResult:
    state: PairState
    model: models.LoadedModel
    pair: PatchPair
    clean: float  # logit(target) − logit(foil) of the clean run
    corrupt: float  # of the corrupted run
    clean_top: list[tuple[str, float]]  # the clean run's most probable next tokens
    corrupt_top: list[tuple[str, float]]


def decoder(source: str, progress: Progress | None = None) -> models.LoadedModel:
    return loaded_models.get(source, progress, expect=models.DECODER)


def top_tokens(model: models.LoadedModel, logits: np.ndarray, k: int = TOP) -> list[tuple[str, float]]:
    """The ``k`` most probable next tokens under ``logits`` (vocab,) as (text, probability)."""
    probs = np.exp(logits - logits.max())
    probs /= probs.sum()
    order = np.argsort(-probs)[:k]
    return [(model.tokenizer.decode([int(i)]), float(probs[i])) for i in order]


def compute_pair(s: PairState, progress: Progress | None = None) -> PairResult:
    """The pair as the model reads it, both runs' metrics and predictions."""
    model = decoder(s.source, progress)
    pair = prepare(model, s.clean, s.corrupt, s.target, s.foil)
    logits = [run(model, ids)[0][-1].astype(np.float64) for ids in (pair.clean, pair.corrupt)]
    m_clean, m_corrupt = (float(x[pair.target.id] - x[pair.foil.id]) for x in logits)
    check_ends(m_clean, m_corrupt)
    return PairResult(s, model, pair, m_clean, m_corrupt, *(top_tokens(model, x) for x in logits))


def sweep(
    r: PairResult,
    whats: tuple[str, ...],
    head: tuple[int, int] | None = None,
    progress: Progress | None = None,
    partial: Callable[[str, object], None] | None = None,
) -> dict[str, Grid | AblationRanking | Attribution]:
    """The exact grids ``whats`` one after the other (``"knockout"``: every head knocked out
    alone, zero-ablation, as Inside a decoder ranks them; ``"approx"``: the Attribution of every
    cell); progress counts over all of them, and ``partial(what, value)`` gets each grid so far
    (cells to come are nan) and the approximation as soon as it is there."""
    s = r.state
    sizes = {w: _cells(r, w) for w in whats}
    total, done, out = sum(sizes.values()), 0, {}
    for what in whats:

        def tick(d: int, _t: int, before=done) -> None:
            if progress is not None:
                progress(before + d, total)

        if what == "approx":
            out[what] = attribute(r.model, r.pair, s.direction)
            if partial is not None:
                partial(what, out[what])
        elif what == "knockout":
            scaled = lambda d, t: tick(d * sizes["knockout"] // t, 0)  # noqa: E731  (layers -> heads)
            out[what] = rank_by_ablation(r.model, r.pair.clean, r.pair.target, r.pair.foil, progress=scaled)
        else:
            keep = None if partial is None else lambda grid: partial(grid.what, grid)
            out[what] = patch(r.model, r.pair, what, s.direction, head, tick, keep)
        done += sizes[what]
    return out


def _cells(r: PairResult, what: str) -> int:
    layers, heads = r.model.n_layers, r.model.n_heads
    if what in ("knockout", "approx"):
        return layers * heads
    rows, columns = labels(r.pair, SimpleNamespace(layers=layers, heads=heads), what)
    return len(rows) * len(columns)


def cell_top(r: PairResult, what: str, row: int, column: int, head=None) -> list[tuple[str, float]]:
    """The next tokens of one patched run (the cell at ``row``, ``column`` of a ``what`` grid)."""
    logits = cell_logits(r.model, r.pair, what, (row, column), r.state.direction, head)
    return top_tokens(r.model, logits)
