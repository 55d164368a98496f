"""The Which words mattered panel's state and computation, Qt-free.

One state for every step: the model, the prompt and the answer (a target, and a foil for
logit(target) − logit(foil); no foil: log p(target); no target: the top next token), attention's
layer and head, integrated gradients' steps and baseline, the token taken away in step 3 and the
two methods step 4 plots. The costly methods (integrated gradients ~3.6 s, occlusion ~1.3 s on
SmolLM2) are kept per model and prompt, so another layer or token costs milliseconds.

    r = compute_words(WordsState(source=folder, target="Mary", foil="John"))
    r.methods["ig"], r.gap, r.agreement
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace

import numpy as np

from core import models
from core.interp import token_scores as ts
from core.interp.ablation import next_token_probs
from core.interp.analysis import analysis_of
from core.interp.prediction import cut_note, encode
from core.interp.ranking import answer_token
from core.interp.token_text import pieces, visible
from core.models.loaded import shared as loaded_models

IOI_PROMPT = "When Mary and John went to the store, John gave a drink to"
SHOWN = 5  # next tokens listed with and without a token
NAMES = {"attention": "attention", "rollout": "rollout", "gradxinput": "gradient × input",
         "ig": "integrated gradients", "occlusion": "occlusion"}  # fmt: skip
Progress = Callable[[int, int], None]


@dataclass(frozen=True)
class WordsState:
    source: str = "smollm2"
    prompt: str = IOI_PROMPT
    target: str = "Mary"  # "": the model's top next token
    foil: str = "John"  # "": log p(target)
    layer: int = 0  # attention's layer, from 1; 0 = the last
    head: int = 0  # from 1; 0 = the mean of the layer's heads
    steps: int = 32  # integrated gradients
    baseline: str = ""  # integrated gradients from this token's input everywhere; "": from zero
    settles: bool = False  # step 2: the completeness gap at each of GAP_STEPS steps too (~500 steps)
    removed: int = 0  # step 3: the token taken away, from 1; 0 = none
    x: str = "attention"  # step 4's scatter: two of core.interp.token_scores.METHODS
    y: str = "occlusion"
    over_set: bool = False  # step 4: the agreement over the built-in prompts too (minutes)


@dataclass(frozen=True)
class WordsResult:
    model: models.LoadedModel
    labels: tuple[str, ...]  # (T,) the tokens as shown
    answer: ts.Answer
    answer_text: str  # e.g. "logit ␣Mary − logit ␣John"
    metric: float
    layer: int  # 0-based, as shown in step 1
    methods: dict[str, np.ndarray]  # name in METHODS → (T,)
    rollout_rest: np.ndarray  # (T,) rollout with the first token left out
    ig: ts.Gradients
    gaps: np.ndarray | None  # (len(GAP_STEPS),) the gap at each count, NaN to come; None: not asked
    agreement: np.ndarray  # (5, 5) Spearman's correlation of every pair of methods
    over_set: ts.Agreement | None  # the same over the built-in prompts scored so far, when asked for
    with_token: tuple[tuple[str, float], ...]  # step 3: the top next tokens, (token, p), and with a
    # token removed the top ones without it too
    without: tuple[float, ...]  # their probabilities without the removed token (empty: none removed)
    removed: int  # the token taken away, from 1; 0 = none
    notices: tuple[str, ...]  # for the message bar: what a cut prompt lost, a token past its end


def compute_words(
    s: WordsState, progress: Progress | None = None, partial: Callable[[WordsResult], None] | None = None
) -> WordsResult:
    """Every step for the prompt and answer of ``s``; ValueError saying what to change. With
    ``over_set``, the built-in prompts follow one by one, each kept once scored; ``partial`` gets
    the result after each (a cancel keeps those done)."""
    model = loaded_models.get(s.source, progress, expect=models.DECODER)
    ids, dropped = encode(model, s.prompt)
    ids = tuple(ids)
    if len(ids) < 2:
        raise ValueError("The prompt is one token: there is nothing to compare it with; type a longer one.")
    if not (0 <= s.layer <= model.n_layers and 0 <= s.head <= model.n_heads):
        raise ValueError(
            f"Layer {s.layer}, head {s.head} does not exist: {model.name} has layers 1 to "
            f"{model.n_layers} and heads 1 to {model.n_heads}."
        )
    if s.x not in ts.METHODS or s.y not in ts.METHODS:
        raise ValueError(f"Choose two of {', '.join(ts.METHODS)}.")
    answer = ts.named_answer(model, s.prompt, s.target, s.foil)
    removed = s.removed if 0 <= s.removed <= len(ids) else 0  # a shorter prompt does not lose its run
    notices = (cut_note(model, ids, dropped),) if dropped else ()
    if removed != s.removed:
        notices += (f"Token {s.removed} is past the prompt's end (1 to {len(ids)}): none is taken away.",)
    baseline = answer_token(model.tokenizer, s.baseline, what="Baseline").id if s.baseline.strip() else None
    kept = analysis_of(model).once
    patterns = kept("words patterns", ids, lambda: ts.attention_rows(model, ids))
    gxi, metric = kept("words gradients", (ids, answer), lambda: ts.grad_x_input(model, ids, answer))
    total = s.steps + len(ids)
    tick = progress or (lambda done, all_: None)
    ig = kept(
        "words ig",
        (ids, answer, s.steps, baseline),
        lambda: ts.integrated_gradients(model, ids, answer, s.steps, baseline, lambda d, _: tick(d, total)),
    )
    occlusion = kept(
        "words occlusion",
        (ids, answer),
        lambda: ts.occlusion(model, ids, answer, lambda d, _: tick(s.steps + d, total)),
    )
    layer = (s.layer or model.n_layers) - 1
    rows = patterns[layer, :, -1] if s.head == 0 else patterns[layer, s.head - 1 : s.head, -1]
    methods = {
        "attention": rows.mean(0),
        "rollout": ts.rollout(patterns),
        "gradxinput": gxi,
        "ig": ig.scores,
        "occlusion": occlusion,
    }
    probs = kept("words next", ids, lambda: next_token_probs(model, ids))
    top = np.argsort(-probs)[:SHOWN]
    without = ()
    if removed:
        gone = ts.without(model, ids, removed - 1)
        top = np.array(list(dict.fromkeys([*top, *np.argsort(-gone)[:SHOWN]])))  # the top of either
        without = gone[top]
    piece = model.tokenizer.decode
    tick(total, total)
    result = WordsResult(
        model=model,
        labels=tuple(visible(p) for p in pieces(model, ids)),
        answer=answer,
        answer_text=answer.describe(model.tokenizer),
        metric=metric,
        layer=layer,
        methods=methods,
        rollout_rest=ts.rollout(patterns, drop_first=True),
        ig=ig,
        agreement=ts.agreement(methods),
        with_token=tuple((visible(piece([int(t)])), float(probs[t])) for t in top),
        without=tuple(float(p) for p in without),
        removed=removed,
        notices=notices,
        gaps=None,
        over_set=None,
    )
    if s.settles:  # each count's run kept, so a cancel loses none and 32 steps is step 2's own

        def ig_of(k: int, step: Progress) -> ts.Gradients:
            compute = lambda: ts.integrated_gradients(model, ids, answer, k, baseline, step)  # noqa: E731
            return kept("words ig", (ids, answer, k, baseline), compute)  # the last 8 runs are kept

        land = None if partial is None else lambda so_far: partial(replace(result, gaps=so_far))
        gaps = ts.gap_by_steps(model, ids, answer, baseline, ts.GAP_STEPS, tick, ig_of, land)
        result = replace(result, gaps=gaps)
    if not s.over_set:
        return result

    def one(pair: tuple[str, str, str]) -> np.ndarray:  # each prompt's kept, so a cancel loses none
        compute = lambda: ts.agreement_of(model, *pair, s.steps)  # noqa: E731
        return kept("words set", (*pair, s.steps), compute, keep=len(ts.AGREEMENT_SET))

    land = None if partial is None else lambda so_far: partial(replace(result, over_set=so_far))
    return replace(result, over_set=ts.agreement_over(model, ts.AGREEMENT_SET, s.steps, tick, one, land))
