"""Which input tokens mattered for one answer of a decoder, by five methods, each a score per token.

    answer = Answer(target_id, foil_id)              # logit(target) − logit(foil); foil None: log p
    answer = named_answer(model, prompt, " Mary", " John")   # the same from texts
    attention_rows(model, ids)                       # (layers, heads, T): the last position's weights
    rollout(patterns, drop_first=False)              # (T,) Abnar and Zuidema's attention rollout
    grad_x_input(model, ids, answer)                 # (T,) Σ_d ∂m/∂e_i · e_i, and the metric
    integrated_gradients(model, ids, answer, 32)     # (T,) with its completeness gap
    occlusion(model, ids, answer)                    # (T,) m − m with token i's input zeroed
    without(model, ids, i)                           # (vocab,) the next token without token i
    spearman(a, b)                                   # rank correlation of two methods' scores
    agreement(found)                                 # (5, 5) Spearman's correlation of every pair
    agreement_of(model, prompt, target, foil)        # the same for one prompt's every method
    agreement_over(model).mean                       # (5, 5) the same over a built-in set of prompts

The input e_i is what the first block receives at token i (the embedding, Gemma's scaled one, and
GPT-2's position embedding added), read and changed through one hooked run (core.decoder.run).
Integrated gradients walks from a baseline (zero, or one token's input at every position) to e
in ``steps`` equal steps, each at its midpoint; occlusion and the steps run batched.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from core.decoder.run import Edit, hooked_run

__all__ = [
    "AGREEMENT_SET", "GAP_STEPS", "IG_RULE", "METHODS", "Agreement", "Answer", "Gradients", "agreement",
    "agreement_of", "agreement_over", "attention_rows", "gap_by_steps",
    "grad_x_input", "integrated_gradients", "named_answer", "occlusion", "rollout", "scores", "spearman",
    "without",
]  # fmt: skip
METHODS = ("attention", "rollout", "gradxinput", "ig", "occlusion")
# Tokens in one batched run of integrated gradients' steps or occlusion's rows: larger products
# run nearer the machine's rate (32 steps of a 20-token prompt: 7.0 s in runs of 8, 5.6 s in one).
ROW_TOKENS = 640


def rows_per_run(length: int) -> int:
    """How many rows of ``length`` tokens one batched run takes."""
    return max(1, ROW_TOKENS // max(length, 1))


IG_RULE = "midpoint rule: the gradient at α = (j + ½)/K, j = 0 … K−1, averaged"  # how the path is summed
GAP_STEPS = (8, 16, 32, 64, 128, 256)  # the step counts whose completeness gaps show whether it settles
Progress = Callable[[int, int], None]


@dataclass(frozen=True)
class Answer:
    """The answer the scores explain: logit(target) − logit(foil), or log p(target) without a foil."""

    target: int
    foil: int | None = None

    @property
    def kind(self) -> str:
        return "log_prob" if self.foil is None else "logit_difference"

    def of(self, logits: Any) -> Any:
        """(batch, T, vocab) logits -> (batch,) the metric at the last position."""
        import torch

        last = logits[:, -1].double()
        if self.foil is None:
            return torch.log_softmax(last, -1)[:, self.target]
        return last[:, self.target] - last[:, self.foil]

    def describe(self, tokenizer: Any) -> str:
        """The metric in words: "logit ␣Mary − logit ␣John", or "log p(␣Mary)"."""
        from core.interp.token_text import visible

        target = visible(tokenizer.decode([self.target]))
        if self.foil is None:
            return f"log p({target})"
        return f"logit {target} − logit {visible(tokenizer.decode([self.foil]))}"


def named_answer(model: Any, prompt: str, target: str = "", foil: str = "") -> Answer:
    """The answer ``target`` and ``foil`` name as continuations of ``prompt``, one token each;
    no target: the model's top next token; no foil: log p(target). ValueError for a word of
    several tokens, a foil without a target, or one equal to it."""
    from core.interp.ablation import next_token_probs
    from core.interp.prediction import encode
    from core.interp.ranking import answer_pair, answer_token

    if not target.strip():
        if foil.strip():
            raise ValueError("A foil is compared with a target: name the target too, e.g. Mary.")
        return Answer(int(np.argmax(next_token_probs(model, encode(model, prompt)[0]))))
    if foil.strip():
        return Answer(*(t.id for t in answer_pair(model.tokenizer, target, foil, prompt)))
    return Answer(answer_token(model.tokenizer, target, prompt).id)


def attention_rows(model: Any, ids: Sequence[int]) -> np.ndarray:
    """(layers, heads, T, T) every head's weights over ``ids`` (rows: queries), from one run."""
    return hooked_run(model, ids, cache=["pattern"], unembed=False).stacked("pattern").double().numpy()


def rollout(patterns: np.ndarray, drop_first: bool = False, rows: str = "last") -> np.ndarray:
    """(T,) the last position's row of Ā_L ⋯ Ā_1, Ā = ½ mean over heads + ½ I with rows summing
    to 1, from ``patterns`` (layers, heads, T, T); ``rows="mean"``: every row's mean (an encoder's
    pooled output). With ``drop_first`` the first token's column (and row) is left out of every
    layer first, the rows renormalised; its score is then 0."""
    mean = patterns.mean(1)  # (layers, T, T)
    start = int(drop_first)
    if drop_first and mean.shape[-1] < 2:
        raise ValueError("Leaving out the first token needs at least two tokens.")
    size = mean.shape[-1] - start
    product = np.eye(size)
    for layer in mean:
        a = layer[start:, start:]
        a = a / np.maximum(a.sum(-1, keepdims=True), 1e-300)
        a = 0.5 * a + 0.5 * np.eye(size)
        product = (a / a.sum(-1, keepdims=True)) @ product
    return np.concatenate([np.zeros(start), product.mean(0) if rows == "mean" else product[-1]])


def _inputs(model: Any, ids: Sequence[int], answer: Answer) -> tuple[Any, Any, float]:
    """(e (T, hidden), ∂m/∂e (T, hidden), m) from one run with gradients."""
    out = hooked_run(
        model, ids, cache=[("resid_pre", 0)], grads=[("resid_pre", 0)], metric=lambda x: answer.of(x).sum(),
        last_logits=True,
    )  # fmt: skip
    return out.cache["resid_pre", 0][0].double(), out.grads["resid_pre", 0][0].double(), out.metric


def grad_x_input(model: Any, ids: Sequence[int], answer: Answer) -> tuple[np.ndarray, float]:
    """((T,) Σ over the hidden dimension of ∂m/∂e_i · e_i, the metric m)."""
    e, grad, metric = _inputs(model, ids, answer)
    return (grad * e).sum(-1).numpy(), metric


@dataclass(frozen=True)
class Gradients:
    """Integrated gradients: the scores and how far their sum is from the metric's change."""

    scores: np.ndarray  # (T,)
    metric: float  # m at the input
    baseline_metric: float  # m at the baseline
    steps: int

    @property
    def gap(self) -> float:
        """Σ scores − (m(input) − m(baseline)): 0 for the exact integral."""
        return float(self.scores.sum() - (self.metric - self.baseline_metric))


def integrated_gradients(
    model: Any,
    ids: Sequence[int],
    answer: Answer,
    steps: int = 32,
    baseline: int | None = None,
    progress: Progress | None = None,
) -> Gradients:
    """From the baseline (None: zero; a token id: that token's input at every position) to the
    input in ``steps`` steps at α_j = (j + ½)/steps; ``progress(done, steps)`` may raise to cancel."""
    import torch

    if not 1 <= steps <= 512:
        raise ValueError(f"Integrated gradients takes 1 to 512 steps; got {steps}.")
    if baseline is None:
        base = 0.0
    else:  # that token's input at every position, from a run that reads it
        first = hooked_run(model, [baseline] * len(ids), cache=[("resid_pre", 0)], unembed=False)
        base = first.cache["resid_pre", 0][0].double()
    tick = progress or (lambda done, total: None)
    tick(0, steps)
    # The first run also takes α = 1 and α = 0, the metric at the input and at the baseline (and
    # the input itself); the gradient sums the path's rows alone.
    alphas = (torch.arange(steps, dtype=torch.float64) + 0.5) / steps
    total, rows_each = 0.0, rows_per_run(len(ids))
    for start in range(0, steps, rows_each):
        path = min(rows_each, steps - start)
        ends = torch.tensor([] if start else [1.0, 0.0], dtype=alphas.dtype)
        alpha = torch.cat([alphas[start : start + path], ends])[:, None, None]  # (B, 1, 1)
        edits = [
            Edit("resid_pre", 0, "scale", alpha.float()),
            Edit("resid_pre", 0, "add", ((1 - alpha) * base).float()),
        ]
        out = hooked_run(
            model, [list(ids)] * len(alpha), edits=edits, cache=[("resid_pre", 0)] if not start else (),
            grads=[("resid_pre", 0)], metric=lambda x, path=path: answer.of(x)[:path].sum(), last_logits=True,
        )  # fmt: skip
        total = total + out.grads["resid_pre", 0][:path].double().sum(0)
        if not start:
            with torch.inference_mode():
                metric, base_metric = map(float, answer.of(out.logits)[path:])
            e = out.cache["resid_pre", 0][path].double()  # α = 1: the input
        tick(min(start + rows_each, steps), steps)
    scores = ((e - base) * total / steps).sum(-1).numpy()
    return Gradients(scores, metric, base_metric, steps)


def gap_by_steps(
    model: Any,
    ids: Sequence[int],
    answer: Answer,
    baseline: int | None = None,
    counts: Sequence[int] = GAP_STEPS,
    progress: Progress | None = None,
    one: Callable[[int, Progress], Gradients] | None = None,
    partial: Callable[[np.ndarray], None] | None = None,
) -> np.ndarray:
    """(len(counts),) integrated gradients' completeness gap in each number of ``counts`` steps, to
    see whether it settles as the steps grow. ``one(k, progress)`` gives the run of k steps
    (default ``integrated_gradients``; a caller may keep them); ``partial(gaps)`` hears each count's
    gap as it lands, NaN for those to come; ``progress(done, total steps)`` may raise to cancel."""
    tick = progress or (lambda done, total: None)
    one = one or (lambda k, step: integrated_gradients(model, ids, answer, k, baseline, step))
    total, done = sum(counts), 0
    gaps = np.full(len(counts), np.nan)
    tick(0, total)
    for i, k in enumerate(counts):
        gaps[i] = one(k, lambda d, _, before=done: tick(before + d, total)).gap
        done += k
        tick(done, total)
        if partial is not None and i + 1 < len(counts):
            partial(gaps.copy())
    return gaps


def _replaced(value: Any) -> Edit:
    """The first block's input replaced by ``value`` (T, hidden)."""
    return Edit("resid_pre", 0, "replace", value.float())


def occlusion(model: Any, ids: Sequence[int], answer: Answer, progress: Progress | None = None) -> np.ndarray:
    """(T,) m(input) − m(input with token i's input set to zero), ``rows_per_run`` tokens a run."""
    import torch

    n = len(ids)
    tick = progress or (lambda done, total: None)
    tick(0, n)
    with torch.inference_mode():
        metric = float(answer.of(hooked_run(model, ids, last_logits=True).logits)[0])
        found = []
        each = rows_per_run(n)
        for start in range(0, n, each):
            rows = range(start, min(start + each, n))
            keep = torch.ones(len(rows), n, 1)
            keep[torch.arange(len(rows)), list(rows)] = 0.0
            out = hooked_run(
                model, [list(ids)] * len(rows), edits=[Edit("resid_pre", 0, "scale", keep)], last_logits=True
            )
            found.append(answer.of(out.logits))
            tick(rows[-1] + 1, n)
    return metric - torch.cat(found).numpy()


def without(model: Any, ids: Sequence[int], position: int) -> np.ndarray:
    """(vocab,) the next token's probabilities with token ``position``'s input set to zero."""
    import torch

    if not 0 <= position < len(ids):
        raise ValueError(f"Token {position + 1} does not exist: the text has tokens 1 to {len(ids)}.")
    keep = torch.ones(1, len(ids), 1)
    keep[0, position] = 0.0
    with torch.inference_mode():
        logits = hooked_run(model, ids, edits=[Edit("resid_pre", 0, "scale", keep)]).logits[0, -1]
        return torch.softmax(logits.double(), -1).numpy()


def _ranks(x: np.ndarray) -> np.ndarray:
    """Ranks from 1, ties sharing their mean rank."""
    order = np.argsort(x, kind="stable")
    ranks = np.empty(len(x))
    ranks[order] = np.arange(1, len(x) + 1)
    for value in np.unique(x):
        tied = x == value
        ranks[tied] = ranks[tied].mean()
    return ranks


def spearman(a: Sequence[float], b: Sequence[float]) -> float:
    """Spearman's rank correlation of two equally long score lists (NaN when one is constant)."""
    a, b = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    if a.shape != b.shape or a.ndim != 1:
        raise ValueError("Spearman's correlation needs two score lists of the same length.")
    ra, rb = _ranks(a) - (len(a) + 1) / 2, _ranks(b) - (len(b) + 1) / 2
    scale = np.sqrt((ra**2).sum() * (rb**2).sum())
    return float((ra * rb).sum() / scale) if scale else float("nan")


# The built-in set for agreement over many prompts: (prompt, target, foil), eight of each kind.
AGREEMENT_SET = (
    # names: the other name of the sentence
    ("When Mary and John went to the store, John gave a drink to", " Mary", " John"),
    ("After Sarah and David finished lunch, David handed the bill to", " Sarah", " David"),
    ("When Anna and Tom arrived at the party, Tom offered a seat to", " Anna", " Tom"),
    ("Lisa and Mark went to the park. Mark threw the ball to", " Lisa", " Mark"),
    ("While Emma and Jack were cooking, Jack passed the salt to", " Emma", " Jack"),
    ("Kate and Paul visited the museum, and Paul bought a ticket for", " Kate", " Paul"),
    ("When Rachel and Steve reached the station, Steve waved goodbye to", " Rachel", " Steve"),
    ("After Laura and James cleaned the kitchen, James made coffee for", " Laura", " James"),
    # facts
    ("The capital of France is", " Paris", " London"),
    ("The Eiffel Tower is in the city of", " Paris", " Rome"),
    ("The largest planet in the solar system is", " Jupiter", " Mars"),
    ("Water freezes at zero degrees", " Celsius", " Fahrenheit"),
    ("The capital of Japan is", " Tokyo", " Beijing"),
    ("The opposite of hot is", " cold", " warm"),
    ("A week has seven", " days", " years"),
    ("The sun rises in the", " east", " west"),
    # agreement: the verb follows the subject, not the nearest noun
    ("The keys to the cabinet", " are", " is"),
    ("The dog that chased the cats", " was", " were"),
    ("The books on the shelf", " are", " is"),
    ("The girl with the red shoes", " was", " were"),
    ("The teachers in the school", " are", " is"),
    ("The man near the windows", " is", " are"),
    ("The flowers in the garden", " are", " is"),
    ("The boy who met the girls", " was", " were"),
    # induction: a list seen once, then again
    ("apple river stone cloud lamp. apple river stone cloud", " lamp", " apple"),
    ("red blue green yellow black. red blue green yellow", " black", " red"),
    ("one seven three nine five. one seven three nine", " five", " one"),
    ("dog cat bird fish horse. dog cat bird fish", " horse", " dog"),
    ("north south east west up. north south east west", " up", " north"),
    ("chair table door window floor. chair table door window", " floor", " chair"),
    ("paper pen ink book page. paper pen ink book", " page", " paper"),
    ("milk bread eggs rice salt. milk bread eggs rice", " salt", " milk"),
)


@dataclass(frozen=True)
class Agreement:
    """Spearman's correlation of every pair of METHODS, prompt by prompt and on average."""

    prompts: tuple[str, ...]  # (N,) those scored
    each: np.ndarray  # (N, methods, methods)
    steps: int  # of integrated gradients

    @property
    def mean(self) -> np.ndarray:
        """(methods, methods) the mean over the prompts (a constant method's NaN left out)."""
        return np.nanmean(self.each, axis=0)


def scores(model: Any, ids: Sequence[int], answer: Answer, steps: int = 32) -> dict[str, np.ndarray]:
    """Every method's scores for ``answer``: the last layer's attention (every head's mean),
    rollout, gradient × input, integrated gradients from zero, occlusion."""
    patterns = attention_rows(model, ids)
    return {
        "attention": patterns[-1, :, -1].mean(0),
        "rollout": rollout(patterns),
        "gradxinput": grad_x_input(model, ids, answer)[0],
        "ig": integrated_gradients(model, ids, answer, steps).scores,
        "occlusion": occlusion(model, ids, answer),
    }


def agreement(found: dict[str, np.ndarray]) -> np.ndarray:
    """(methods, methods) Spearman's correlation of every pair of METHODS' scores in ``found``."""
    return np.array([[spearman(found[a], found[b]) for b in METHODS] for a in METHODS])


def agreement_of(model: Any, prompt: str, target: str, foil: str, steps: int = 32) -> np.ndarray:
    """(methods, methods) the agreement of every method on one prompt's answer."""
    from core.interp.prediction import encode

    return agreement(
        scores(model, encode(model, prompt)[0], named_answer(model, prompt, target, foil), steps)
    )


def agreement_over(
    model: Any,
    pairs: Sequence[tuple[str, str, str]] = AGREEMENT_SET,
    steps: int = 32,
    progress: Progress | None = None,
    one: Callable[[tuple[str, str, str]], np.ndarray] | None = None,
    partial: Callable[[Agreement], None] | None = None,
) -> Agreement:
    """Every method on each (prompt, target, foil) of ``pairs``, their rankings compared;
    ``progress(done, prompts)`` after each prompt may raise to cancel. ``one(pair)`` gives a
    prompt's matrix (default ``agreement_of``; a caller may keep them); ``partial(so far)`` hears
    every prompt's result but the last."""
    one = one or (lambda pair: agreement_of(model, *pair, steps))
    tick = progress or (lambda done, total: None)
    tick(0, len(pairs))
    each = []
    for k, pair in enumerate(pairs):
        each.append(one(pair))
        tick(k + 1, len(pairs))
        if partial is not None and k + 1 < len(pairs):
            partial(Agreement(tuple(p for p, _, _ in pairs[: k + 1]), np.array(each), steps))
    return Agreement(tuple(p for p, _, _ in pairs), np.array(each), steps)
