"""The Patching panel's state and computations, Qt-free.

One state, the pair, is shared by every step; its compute (in the worker) loads the decoder,
checks the pair, runs both prompts and the one-pass approximation (attribution patching). The
exact sweeps run in the worker on request, one ``Sweep`` per step, cells filling in.

    r = compute_pair(PairState(source=folder))
    r.approx.grid("resid").values                  # (layers + 1, T) estimate
    sweep(r, ("resid",), progress=…, partial=…)    # {"resid": Grid}
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from core import models
from core.ablation import run
from core.ablation_ranking import AblationRanking, rank_by_ablation
from core.attribution_patching import Attribution, attribute
from core.loaded_models import shared as loaded_models
from core.patching import Grid, PatchPair, cell_logits, patch, prepare

SMOLLM2 = "smollm2"
Progress = Callable[[int, int], None]
PRESETS = {  # name: (clean, corrupted, target, foil)
    "Names (IOI)": (
        "When Mary and John went to the store, John gave a drink to",
        "When Mary and John went to the store, Mary gave a drink to",
        "Mary",
        "John",
    ),
    "A fact": ("The Eiffel Tower is in the city of", "The Colosseum is in the city of", "Paris", "Rome"),
    "A repeated sequence": ("A B C D E A B C D", "A B C D F A B C D", "E", "F"),
}
TOP = 6  # next-token candidates listed


@dataclass(frozen=True)
class PairState:
    source: str = SMOLLM2
    clean: str = PRESETS["Names (IOI)"][0]
    corrupt: str = PRESETS["Names (IOI)"][1]
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
    approx: Attribution  # every cell's one-pass estimate, in the state's direction
    clean_top: list[tuple[str, float]]  # the clean run's most probable next tokens
    corrupt_top: list[tuple[str, float]]

    @property
    def clean(self) -> float:
        return self.approx.clean

    @property
    def corrupt(self) -> float:
        return self.approx.corrupt


def decoder(source: str, progress: Progress | None = None) -> models.LoadedModel:
    return loaded_models.get(source, progress, expect=models.DECODER)


def top_tokens(model: models.LoadedModel, logits: np.ndarray, k: int = TOP) -> list[tuple[str, float]]:
    """The ``k`` most probable next tokens under ``logits`` (vocab,) as (text, probability)."""
    probs = np.exp(logits - logits.max())
    probs /= probs.sum()
    order = np.argsort(-probs)[:k]
    return [(model.tokenizer.decode([int(i)]), float(probs[i])) for i in order]


def compute_pair(s: PairState, progress: Progress | None = None) -> PairResult:
    """The pair as the model reads it, both runs' predictions and the attribution estimate."""
    model = decoder(s.source, progress)
    pair = prepare(model, s.clean, s.corrupt, s.target, s.foil)
    approx = attribute(model.module, pair, s.direction)
    tops = [top_tokens(model, run(model.module, ids)[0][-1]) for ids in (pair.clean, pair.corrupt)]
    return PairResult(s, model, pair, approx, *tops)


def sweep(
    r: PairResult,
    whats: tuple[str, ...],
    head: tuple[int, int] | None = None,
    progress: Progress | None = None,
    partial: Callable[[Grid], None] | None = None,
) -> dict[str, Grid | AblationRanking]:
    """The exact grids ``whats`` one after the other (``"knockout"``: every head knocked out
    alone, zero-ablation, as Inside a decoder ranks them); progress counts over all of them."""
    module, s = r.model.module, r.state
    sizes = {w: _cells(r, w) for w in whats}
    total, done, out = sum(sizes.values()), 0, {}
    for what in whats:

        def tick(d: int, _t: int, before=done) -> None:
            if progress is not None:
                progress(before + d, total)

        if what == "knockout":
            scaled = lambda d, t: tick(d * sizes["knockout"] // t, 0)  # noqa: E731  (layers -> heads)
            out[what] = rank_by_ablation(module, r.pair.clean, r.pair.target, r.pair.foil, progress=scaled)
        else:
            out[what] = patch(module, r.pair, what, s.direction, head, tick, partial)
        done += sizes[what]
    return out


def _cells(r: PairResult, what: str) -> int:
    shape = r.approx.shape
    if what == "knockout":
        return shape.layers * shape.heads
    return int(r.approx.grid(what, (0, 0)).raw.size)


def cell_top(r: PairResult, what: str, row: int, column: int, head=None) -> list[tuple[str, float]]:
    """The next tokens of one patched run (the cell at ``row``, ``column`` of a ``what`` grid)."""
    logits = cell_logits(r.model.module, r.pair, what, (row, column), r.state.direction, head)
    return top_tokens(r.model, logits)
