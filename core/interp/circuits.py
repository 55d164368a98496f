"""Edge attribution patching: which connections between heads and MLPs carry a decoder's answer.

An edge joins a sender (the embeddings, a head, an MLP) to a receiver that reads it later (a
head's query, key or value input, an MLP's input, the logits; ``core.decoder.edges``). Patching
one edge from the clean run into the corrupted one changes the metric (logit(target) −
logit(foil) at the last position) by about (u_clean − u_corrupt) · ∂metric/∂v, the gradient taken
at the receiver's input in the corrupted run: one run with gradients scores every edge (EAP,
Syed, Rager and Conmy 2023). EAP-IG (Hanna et al. 2024) averages that gradient over ``steps``
points between the two runs' embeddings, α_j = (j + ½)/steps. Scores are normalised like
patching's: 1 is the whole distance from the corrupted run's metric to the clean run's.

    pair = patching.prepare(model, clean, corrupt, " Mary", " John")
    found = edge_scores(model, pair, "eap")           # Scores of every edge
    found.top(20)                                     # [Edge], largest |score| first
    found.circuit(20)                                 # (S, R) bool: those edges, pruned
    faithfulness(model, found, [0, 20, found.count])  # fraction of the clean metric each recovers
    exact_effects(model, found, found.top(5))         # each edge patched alone

Noising scores the other way: the gradient in the clean run, the change of patching one edge from
the corrupted run into it.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from functools import cached_property
from typing import Any

import numpy as np

from core.decoder.adapter import adapter_of
from core.decoder.edges import EdgeRun, Graph, edge_run
from core.decoder.run import hooked_run
from core.interp.analysis import analysis_of
from core.interp.patching import PatchPair, check_direction, check_ends, metric_of

METHODS = ("eap", "eap-ig")
STEPS = 5  # EAP-IG's default
MAX_STEPS = 64
POINTS = 12  # a faithfulness curve's default number of circuit sizes
Progress = Callable[[int, int], None]


@dataclass(frozen=True)
class Edge:
    """One edge and its score (indices into ``Graph``'s senders and receivers)."""

    sender: int
    receiver: int
    score: float

    def describe(self, graph: Graph) -> dict:
        """{"from", "to", "input", "score"} with names as the graph gives them (from 1), and both
        ends as TransformerLens names them (from 0)."""
        to, part = graph.receiver_names[self.receiver]
        return {
            "from": graph.sender_names[self.sender], "to": to, "input": part, "score": self.score,
            "from_tl": graph.sender_rows[self.sender], "to_tl": graph.receiver_rows[self.receiver],
        }  # fmt: skip


@dataclass(frozen=True, eq=False)
class Ends:
    """Both unpatched runs, split into senders."""

    clean: EdgeRun
    corrupt: EdgeRun

    def way(self, pair: PatchPair, direction: str) -> tuple[EdgeRun, EdgeRun, tuple[int, ...]]:
        """(the run patched from, the run patched into, the ids of the latter): denoising patches
        the clean run into the corrupted one, noising the other way."""
        if direction == "denoise":
            return self.clean, self.corrupt, pair.corrupt
        return self.corrupt, self.clean, pair.clean

    @property
    def distance(self) -> float:
        """metric(clean) − metric(corrupt): what the normalised metric divides by."""
        return self.clean.metric - self.corrupt.metric


@dataclass(frozen=True, eq=False)
class Scores:
    """Every edge's score for one pair, method and direction."""

    pair: PatchPair
    method: str
    direction: str
    steps: int  # EAP-IG's points (1 for EAP)
    graph: Graph
    ends: Ends
    values: (
        np.ndarray
    )  # (S, R) float64: each edge's estimated change of the normalised metric; 0 where no edge

    @cached_property
    def order(self) -> np.ndarray:
        """Flat indices of every edge, largest |score| first (ties in graph order)."""
        flat = np.flatnonzero(self.graph.exists)
        return flat[np.argsort(-np.abs(self.values.ravel()[flat]), kind="stable")]

    @property
    def count(self) -> int:
        return len(self.order)

    def top(self, n: int) -> list[Edge]:
        """The ``n`` edges of largest |score|."""
        receivers = self.graph.receivers
        return [
            Edge(int(i // receivers), int(i % receivers), float(self.values.flat[i])) for i in self.order[:n]
        ]

    def circuit(self, n: int) -> np.ndarray:
        """(S, R) bool: the top ``n`` edges less those off every path from the embeddings to the logits."""
        check_count(n, self.count, "edges")
        kept = np.zeros(self.values.shape, bool)
        kept.flat[self.order[:n]] = True
        return prune(self.graph, kept)


def circuit_nodes(graph: Graph, mask: np.ndarray) -> list[str]:
    """The names of the nodes the edges of a pruned ``mask`` (S, R) join, in graph order
    ("embeddings", "L1 H1", …, "L1 MLP", …, "logits"). In a pruned circuit every node that
    receives an edge sends one on, but for the heads that only share a key/value group with the
    head that does: they are left out, so the senders of kept edges and the logits are the nodes."""
    used = np.append(mask.any(1), mask[:, graph.logits].any())
    return [(*graph.sender_names, "logits")[i] for i in np.flatnonzero(used)]


def check_count(n: int, count: int, what: str) -> None:
    if not 0 <= n <= count:
        raise ValueError(f"Choose 0 to {count} {what} (this model's graph has {count} edges); got {n}.")


def prune(graph: Graph, kept: np.ndarray) -> np.ndarray:
    """(S, R) bool: the ``kept`` edges whose sender the embeddings reach and whose receiver reaches
    the logits, both through kept edges."""
    senders = graph.senders
    reached = np.zeros(senders + 1, bool)  # nodes: the senders, then the logits
    reached[0] = True
    for r, nodes in enumerate(graph.receiver_nodes):  # receivers come in the order they run
        if (kept[:, r] & reached[:senders]).any():
            reached[list(nodes)] = True
    alive = np.zeros(senders + 1, bool)
    alive[senders] = True
    feeds = np.zeros(graph.receivers, bool)
    for r in range(graph.receivers - 1, -1, -1):
        feeds[r] = alive[list(graph.receiver_nodes[r])].any()
        if feeds[r]:
            alive[:senders] |= kept[:, r]
    return kept & reached[:senders, None] & feeds[None, :]


def answer_metric(model: Any, pair: PatchPair) -> Callable[[Any], Any]:
    """(1, T, hidden) final norm's output -> logit(target) − logit(foil) at the last position."""
    of = metric_of(adapter_of(model.module), pair)
    return lambda normed: of(normed[:, -1].float())[0]


def _ticker(progress: Progress | None, total: int) -> Callable[[int], Callable[[], None]]:
    tick = progress or (lambda done, total: None)
    tick(0, total)
    return lambda done: lambda: tick(done, total)


def ends(
    model: Any, pair: PatchPair, grads: str | None = None, ticks: Callable[[int], Callable] | None = None
) -> Ends:
    """Both runs split, the run named by ``grads`` ("clean" or "corrupt") with the metric's
    gradient at every receiver too; ``ticks(i)`` is called at each block of run i (0: clean).
    ValueError when they give the same metric, or when the split run does not give the model's own
    (a family this does not read: checked once per model)."""
    metric = answer_metric(model, pair)
    clean, corrupt = (
        edge_run(model, ids, normed_metric=metric, grads=grads == name, tick=ticks and ticks(i))
        for i, (name, ids) in enumerate((("clean", pair.clean), ("corrupt", pair.corrupt)))
    )
    check_ends(clean.metric, corrupt.metric)
    analysis_of(model).once("splits", (), lambda: _check_split(model, pair.clean, clean.normed))
    return Ends(clean, corrupt)


def _check_split(model: Any, ids: tuple[int, ...], normed: Any) -> bool:
    """ValueError unless ``normed`` (T, hidden), a split run's final norm output over ``ids``, is
    the model's own."""
    whole = hooked_run(model, ids, unembed=False).normed[0]
    if float((whole - normed).abs().max()) > 1e-3 * max(1.0, float(whole.abs().max())):
        raise ValueError(
            "This model's stream does not split into its heads and MLPs here, so its edges cannot be patched."
        )
    return True


def edge_scores(
    model: Any,
    pair: PatchPair,
    method: str = "eap",
    direction: str = "denoise",
    steps: int = STEPS,
    progress: Progress | None = None,
) -> Scores:
    """Every edge's score on ``pair`` (from ``core.interp.patching.prepare``). ``progress(done,
    total)`` (runs) is called at every block; raising from it cancels. EAP takes its gradients in
    the run patched into, so it is two runs (one with gradients); EAP-IG two and ``steps``."""
    import torch

    check_direction(direction)
    if method not in METHODS:
        raise ValueError(f"Unknown method '{method}'; choose {' or '.join(METHODS)}.")
    steps = 1 if method == "eap" else steps
    if not 1 <= steps <= MAX_STEPS:
        raise ValueError(f"EAP-IG takes 1 to {MAX_STEPS} steps; got {steps}.")
    paths = steps if method == "eap-ig" else 0
    ticks = _ticker(progress, paths + 2)
    into = "corrupt" if direction == "denoise" else "clean"
    found = ends(model, pair, grads=into if method == "eap" else None, ticks=ticks)
    source, base, ids = found.way(pair, direction)
    metric = answer_metric(model, pair)
    grads = 0 if paths else base.grads.double()
    for j in range(paths):
        path = base.outputs[0] + (j + 0.5) / steps * (source.outputs[0] - base.outputs[0])
        run = edge_run(model, ids, normed_metric=metric, embeddings=path, grads=True, tick=ticks(j + 2))
        grads = grads + run.grads.double() / steps
    change = (source.outputs - base.outputs).double()
    graph = Graph.of(adapter_of(model.module))
    values = torch.einsum("sth,rth->sr", change, grads).numpy() / found.distance
    values[~graph.exists] = 0.0
    ticks(paths + 2)()
    kept = Ends(replace(found.clean, grads=None), replace(found.corrupt, grads=None))  # (R, T, hidden) less
    return Scores(pair, method, direction, steps, graph, kept, values)


def faithfulness(
    model: Any, scores: Scores, counts: Sequence[int], progress: Progress | None = None
) -> list[tuple[int, float]]:
    """(n, recovered) for each circuit size n: the clean prompt run with every edge outside the
    pruned top-n circuit fed from the corrupted run, as a fraction of the way from the corrupted
    metric (0) to the clean one (1)."""
    for n in counts:
        check_count(n, scores.count, "edges")
    ticks = _ticker(progress, len(counts))
    metric, graph, found = answer_metric(model, scores.pair), scores.graph, scores.ends
    out = []
    for i, n in enumerate(counts):
        outside = graph.exists & ~scores.circuit(n)
        run = edge_run(
            model,
            scores.pair.clean,
            normed_metric=metric,
            other=found.corrupt.outputs,
            swapped=outside,
            tick=ticks(i),
        )
        out.append((int(n), (run.metric - found.corrupt.metric) / found.distance))
    ticks(len(counts))()
    return out


def curve_counts(count: int, points: int = POINTS) -> list[int]:
    """About ``points`` circuit sizes from 0 to ``count``, spaced evenly on a log scale."""
    inner = np.unique(np.round(np.geomspace(1, count, max(points - 1, 2))).astype(int))
    return [0, *(int(n) for n in inner)]


def exact_effects(
    model: Any, scores: Scores, edges: Sequence[Edge], progress: Progress | None = None
) -> list[float]:
    """Each edge patched alone (denoising: the clean run's sender output into the corrupted run at
    that receiver; noising the other way): the change of the normalised metric."""
    found, graph = scores.ends, scores.graph
    source, base, ids = found.way(scores.pair, scores.direction)
    metric = answer_metric(model, scores.pair)
    ticks = _ticker(progress, len(edges))
    out = []
    for i, edge in enumerate(edges):
        swapped = np.zeros((graph.senders, graph.receivers), bool)
        swapped[edge.sender, edge.receiver] = True
        run = edge_run(model, ids, normed_metric=metric, other=source.outputs, swapped=swapped, tick=ticks(i))
        out.append((run.metric - base.metric) / found.distance)
    ticks(len(edges))()
    return out


def memory_needed(model: Any, length: int) -> int:
    """Bytes about that a run with gradients over ``length`` tokens holds beyond the weights."""
    adapter = adapter_of(model.module)
    shape, graph = adapter.shape, Graph.of(adapter)
    rows = graph.per_layer - 1
    per_layer = rows * (shape.hidden + (shape.heads + 2 * shape.kv_heads) * shape.head_dim) + 8 * shape.hidden
    held = shape.layers * per_layer * length * 4 * 3  # activations kept for the backward pass
    return held + (graph.senders + 2 * graph.receivers) * length * shape.hidden * 8


def check_memory(model: Any, length: int, free: int | None) -> None:
    """ValueError, before any run, when the gradients over ``length`` tokens need more than the
    ``free`` bytes (None: not known, no check)."""
    needed = memory_needed(model, length)
    if free is not None and needed > free:
        raise ValueError(
            f"Scoring every edge of {model.name} on {length} tokens needs about {needed / 2**30:.1f} GB "
            f"for its gradients and {free / 2**30:.1f} GB is free; shorten the prompts or close other "
            "programs."
        )
