"""The Circuits panel's state and computation, Qt-free.

One state for every step: the pair (as Patching's), the method (EAP or EAP-IG with its steps),
the circuit's size N and the edge clicked. The compute hands back the circuit as soon as the
chosen method's scores are there (about 1 s for EAP on SmolLM2), then the faithfulness curves of
both methods, then the top edges patched exactly; each is kept per model and pair, so moving the
slider or clicking an edge costs milliseconds (one patched run for an edge not yet patched).

    r = compute_circuit(CircuitState(source=folder), partial=print)
    r.shown, r.curves["eap"], r.exact
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace

import numpy as np

from core import models
from core.interp import circuits
from core.interp.analysis import analysis_of
from core.interp.patching import PAIRS, PatchPair, prepare
from core.models.loaded import shared as loaded_models

CHECKED = 30  # the top edges step 4 patches one at a time
Progress = Callable[[int, int], None]


@dataclass(frozen=True)
class CircuitState:
    source: str = "smollm2"
    clean: str = PAIRS["Names (IOI)"][0]
    corrupt: str = PAIRS["Names (IOI)"][1]
    target: str = "Mary"
    foil: str = "John"
    direction: str = "denoise"
    method: str = "eap"  # core.interp.circuits.METHODS
    steps: int = circuits.STEPS  # EAP-IG's points
    edges: int = 20  # the circuit: the top N edges by |score|, then pruned
    edge: int = 0  # the edge clicked: its place in the circuit's list, from 1; 0 = none


@dataclass(frozen=True)
class CircuitResult:
    state: CircuitState
    model: models.LoadedModel
    pair: PatchPair
    scores: circuits.Scores  # the chosen method's
    shown: tuple[circuits.Edge, ...]  # the circuit's edges, largest |score| first
    nodes: tuple[str, ...]  # the nodes they join
    curves: dict[str, list[tuple[int, float]]] | None  # method -> (N, recovered); None: to come
    checked: tuple[circuits.Edge, ...]  # the top CHECKED edges (before pruning)
    exact: tuple[float, ...] | None  # their exact effects; None: to come
    chosen: tuple[circuits.Edge, float] | None  # the clicked edge and its exact effect

    @property
    def missing(self) -> str:
        """What is still being computed, for the steps to say ("" when nothing)."""
        return (
            "the faithfulness curves"
            if self.curves is None
            else "the exact effects"
            if self.exact is None
            else ""
        )


def compute_circuit(
    s: CircuitState, progress: Progress | None = None, partial: Callable[[CircuitResult], None] | None = None
) -> CircuitResult:
    """Every step for the pair and method of ``s``; ValueError saying what to change."""
    model = loaded_models.get(s.source, progress, expect=models.DECODER)
    pair = prepare(model, s.clean, s.corrupt, s.target, s.foil)
    circuits.check_memory(model, pair.length, models.available_memory())
    analysis = analysis_of(model)
    kept = analysis.once
    key = (pair.clean, pair.corrupt, pair.target.id, pair.foil.id, s.direction)
    stages = _Stages(
        progress, {"scores": s.steps + 2, "other": 7, "curves": 2 * circuits.POINTS, "exact": CHECKED}
    )

    def scores_of(method: str, stage: str) -> circuits.Scores:
        return kept(
            "circuit scores",
            (*key, method, s.steps),
            lambda: circuits.edge_scores(model, pair, method, s.direction, s.steps, stages.tick(stage)),
        )

    scores = scores_of(s.method, "scores")
    if not 1 <= s.edges <= scores.count:
        raise ValueError(f"Choose 1 to {scores.count} edges for the circuit; got {s.edges}.")
    mask = scores.circuit(s.edges)
    shown = tuple(e for e in scores.top(s.edges) if mask[e.sender, e.receiver])
    if s.edge > len(shown):
        raise ValueError(f"The circuit has {len(shown)} edges; there is no edge {s.edge} in it.")
    nodes = tuple(circuits.circuit_nodes(scores.graph, mask))
    checked = tuple(scores.top(CHECKED))
    chosen = _chosen(model, kept, key, s, shown, scores)
    result = CircuitResult(s, model, pair, scores, shown, nodes, None, checked, None, chosen)
    curves_key, exact_key = (*key, s.steps), (*key, s.method, s.steps)
    if partial is not None and analysis.kept("circuit exact", exact_key) is None:
        partial(result)
    sizes = circuits.curve_counts(scores.count)

    def curves() -> dict:
        both = {m: scores_of(m, "other") if m != s.method else scores for m in circuits.METHODS}
        tick = stages.tick("curves")
        out = {}
        for i, (m, found) in enumerate(both.items()):
            out[m] = circuits.faithfulness(model, found, sizes, lambda d, t, i=i: tick(i * t + d, 2 * t))
        return out

    result = replace(result, curves=kept("circuit curves", curves_key, curves))
    if partial is not None and analysis.kept("circuit exact", exact_key) is None:
        partial(result)
    exact = kept(
        "circuit exact",
        exact_key,
        lambda: tuple(circuits.exact_effects(model, scores, checked, stages.tick("exact"))),
    )
    stages.finish()
    return replace(result, exact=exact)


def _chosen(model, kept, key, s: CircuitState, shown, scores) -> tuple[circuits.Edge, float] | None:
    """The clicked edge and its exact effect (one patched run, kept)."""
    if s.edge == 0:
        return None
    edge = shown[s.edge - 1]
    effect = kept(
        "circuit edge",
        (*key, edge.sender, edge.receiver),
        lambda: circuits.exact_effects(model, scores, [edge])[0],
    )
    return edge, effect


class _Stages:
    """One progress bar over named stages of known sizes, each counted from 0."""

    def __init__(self, progress: Progress | None, sizes: dict[str, int]):
        self.progress, self.sizes = progress, sizes
        self.total = sum(sizes.values())

    def tick(self, stage: str) -> Progress:
        names = list(self.sizes)
        before = sum(self.sizes[n] for n in names[: names.index(stage)])
        size = self.sizes[stage]
        return lambda d, t: self._say(before + size * d // max(t, 1))

    def _say(self, done: int) -> None:
        if self.progress is not None:
            self.progress(done, self.total)

    def finish(self) -> None:
        self._say(self.total)


def smallest_above(curve: list[tuple[int, float]], level: float = 0.8) -> int | None:
    """The smallest measured circuit size that recovers at least ``level`` of the clean metric."""
    return next((n for n, recovered in curve if recovered >= level), None)


def rank_agreement(r: CircuitResult) -> float:
    """Spearman's correlation of the top edges' scores and their exact effects (NaN until known)."""
    from core.interp.token_scores import spearman

    if r.exact is None:
        return float("nan")
    return spearman(np.array([e.score for e in r.checked]), np.array(r.exact))
