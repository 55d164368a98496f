"""Two decoders side by side on the same prompts: which heads carry an answer, which are attention
sinks, which do induction. Each layer sits at its depth, (layer + ½) / layers with layers counted
from 0 (layer 1 of 30 at 0.017, layer 30 at 0.983), so that models of different sizes line up.

    a = profile(smol, IOI_PROMPT, "Mary", "John", SINK_PROMPT)   # one model's heads
    b = profile(gemma, IOI_PROMPT, "Mary", "John", SINK_PROMPT)
    for line in side_by_side(a, b): print(line)                  # what holds for both, measured

The three measures are the panel's steps 2, 4 and 5 (``rank_by_ablation``, ``sink_scores``, the
induction score on a repeated random sequence), read through the model's shared analysis.
Layers and heads are 0-based here, 1-based in the sentences.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from core.interp.analysis import analysis_of
from core.interp.prediction import encode
from core.interp.ranking import answer_pair
from core.interp.sinks import sink_scores

SINK = 0.5  # a sink puts more than this on the first token (as step 4 counts them)
INDUCTION = 0.4  # an induction head puts more than this on the token after the earlier copy
CARRIES = 0.1  # a head carries the answer when knocking it out alone loses more than this share


@dataclass(frozen=True)
class Profile:
    """One model's heads, each measure (layers, heads)."""

    name: str
    answer: np.ndarray  # share of the clean logit difference lost with the head knocked out alone
    sink: np.ndarray  # mean weight on the first token, over the other positions
    induction: np.ndarray  # mean weight from the second copy's tokens to the token after their first copy
    clean: float  # logit(target) − logit(foil), every head in place

    @property
    def depth(self) -> np.ndarray:
        """(layers, heads) each head's depth in (0, 1): (layer + ½) / layers, layers from 0."""
        layers, heads = self.answer.shape
        return np.repeat((np.arange(layers)[:, None] + 0.5) / layers, heads, axis=1)

    def top(self, measure: str, k: int = 3) -> list[tuple[int, int, float, float]]:
        """The ``k`` heads highest on ``measure``: (layer, head, depth, value)."""
        values = getattr(self, measure)
        order = np.argsort(-values, axis=None, kind="stable")[:k]
        return [(int(i), int(j), float(self.depth[i, j]), float(values[i, j]))
                for i, j in zip(*np.unravel_index(order, values.shape), strict=True)]  # fmt: skip

    def over(self, measure: str, threshold: float) -> np.ndarray:
        """The depths of the heads above ``threshold`` on ``measure``, shallow first."""
        return np.sort(self.depth[getattr(self, measure) > threshold])

    def by_thirds(self, measure: str) -> tuple[float, float, float]:
        """The mean of ``measure`` over the heads in the first, middle and last third of the depth
        (NaN for a third with no layer in it)."""
        values, depth = getattr(self, measure), self.depth
        parts = [values[(depth >= lo) & (depth < lo + 1 / 3)] for lo in (0, 1 / 3, 2 / 3)]
        return tuple(float(part.mean()) if part.size else float("nan") for part in parts)


def profile(
    model: Any,
    prompt: str,
    target: str,
    foil: str,
    sink_prompt: str,
    n: int = 30,
    seed: int = 0,
    progress: Callable[[int, int], None] | None = None,
) -> Profile:
    """``model``'s heads on the three measures: every head knocked out alone on ``prompt`` (target
    against foil), the first token's weight on ``sink_prompt``, and the induction score on ``n``
    seeded random tokens repeated twice. ``progress(done, total)``: one per layer, then two."""
    ids, sink_ids = encode(model, prompt)[0], encode(model, sink_prompt)[0]
    chosen = answer_pair(model.tokenizer, target, foil, prompt)
    layers = model.n_layers
    tick = progress or (lambda done, total: None)
    analysis = analysis_of(model)  # step 2's ranking, kept for both
    ranking = analysis.ranking(tuple(ids), *chosen, progress=lambda done, _: tick(done, layers + 2))
    sink = sink_scores(analysis.clean_run(tuple(sink_ids)).attentions)
    tick(layers + 1, layers + 2)
    induction = analysis.induction(n, seed).induction
    tick(layers + 2, layers + 2)
    return Profile(model.name, ranking.relative_drop, sink, induction, ranking.clean)


def side_by_side(a: Profile, b: Profile) -> list[str]:
    """One sentence per measure, with both models' numbers."""

    def head(p: Profile, measure: str) -> str:
        layer, h, depth, value = p.top(measure, 1)[0]
        return f"{p.name}'s L{layer + 1} H{h + 1} (depth {depth:.2f}, {value:.2f})"

    def spread(p: Profile, measure: str, threshold: float) -> str:
        depths = p.over(measure, threshold)
        share = f"{len(depths)} of {p.answer.size} heads"
        return share if not len(depths) else f"{share}, at depths {depths[0]:.2f}–{depths[-1]:.2f}"

    def thirds(p: Profile) -> str:
        return " / ".join("–" if np.isnan(v) else f"{v:.2f}" for v in p.by_thirds("sink"))

    return [
        f"Answer: the head whose loss costs the most is {head(a, 'answer')} and {head(b, 'answer')}. "
        f"Heads that each carry more than {CARRIES:.0%} of it: {a.name} {spread(a, 'answer', CARRIES)}; "
        f"{b.name} {spread(b, 'answer', CARRIES)}.",
        f"Sinks: heads with more than {SINK:.0%} of their weight on the first token: {a.name} "
        f"{spread(a, 'sink', SINK)}; {b.name} {spread(b, 'sink', SINK)}. Mean weight on it by thirds "
        f"of the depth: {a.name} {thirds(a)}, {b.name} {thirds(b)}.",
        f"Induction: heads scoring above {INDUCTION}: {a.name} {spread(a, 'induction', INDUCTION)}; "
        f"{b.name} {spread(b, 'induction', INDUCTION)}. The strongest: {head(a, 'induction')} and "
        f"{head(b, 'induction')}.",
    ]
