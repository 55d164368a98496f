"""The Inside a decoder panel's states and computations, Qt-free.

Every step reads the same decoder, shared with the other panels through core.models.loaded
(``decoder``); every compute
runs in the worker and raises ValueError with a message for bad input. Layers and heads are
0-based here and 1-based on screen.

    r = compute_knock(KnockState(source=folder, heads=((5, 2),)))
    r.clean.shape == r.ablated.shape == (vocab,)
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from core import models
from core.interp import prediction, token_text
from core.interp.ablation import Head, ablated, next_token_probs
from core.interp.analysis import CleanRun, analysis_of
from core.interp.induction import InductionTest, induction_test
from core.interp.lens import LogitLens, read_streams, with_target
from core.interp.ranking import (
    AblationRanking,
    AnswerToken,
    answer_token,
    check_pair,
    rank_by_attention,
)
from core.interp.sinks import FirstTokenDropped, sink_scores, without_first_token
from core.maths.head_analysis import HeadRanking
from core.models.loaded import shared as loaded_models

SMOLLM2 = "smollm2"
IOI_PROMPT = "When Mary and John went to the store, John gave a drink to"
SINK_PROMPT = "The capital of France is Paris, and the capital of Italy is"
TOP = 8  # next-token candidates listed
MAX_RANDOM = 200  # random tokens in one copy of the induction sequence
Progress = Callable[[int, int], None]


def decoder(source: str, progress: Progress | None = None) -> models.LoadedModel:
    """The decoder ``source`` names ("smollm2", a folder or a cache id), loaded on first use;
    ValueError for an encoder, an unsupported family or a folder that holds no model."""
    return loaded_models.get(source, progress, expect=models.DECODER)  # one load, shared


def clean_run(source: str, ids: tuple[int, ...]) -> CleanRun:
    """The intact model's run over ``ids``, computed once and shared by every step."""
    return analysis_of(decoder(source)).clean_run(ids)


@dataclass(frozen=True)
class Prompt:
    """A prompt as the model reads it."""

    ids: tuple[int, ...]
    pieces: tuple[str, ...]
    dropped: int  # tokens cut from the start to fit the context


def read_prompt(model: models.LoadedModel, text: str) -> Prompt:
    ids, dropped = prediction.encode(model, text)
    return Prompt(tuple(ids), token_text.pieces(model, ids), dropped)


def top_tokens(model: models.LoadedModel, probs: np.ndarray, k: int = TOP) -> list[tuple[str, float]]:
    """The ``k`` most probable next tokens as (text, probability), most probable first."""
    order = np.argsort(-probs)[:k]
    return [(model.tokenizer.decode([int(i)]), float(probs[i])) for i in order]


def _answer(model: models.LoadedModel, text: str, prompt: str, what: str) -> AnswerToken | None:
    return answer_token(model.tokenizer, text, prompt, what) if text.strip() else None


def _means_for(source: str, mode: str) -> np.ndarray | None:
    """The heads' mean outputs when ``mode`` is "mean" (None for zero-ablation)."""
    return analysis_of(decoder(source)).means() if mode == "mean" else None


# --- 1 and 2. Knock out heads; which heads matter ---------------------------------------------------
@dataclass(frozen=True)
class KnockState:
    source: str = SMOLLM2
    prompt: str = IOI_PROMPT
    target: str = "Mary"
    foil: str = "John"
    heads: tuple[Head, ...] = ()  # knocked out, (layer, head) 0-based
    mode: str = "zero"
    first: bool = False  # knock them out at the first token too (the attention sink)
    ranked: bool = False  # step 2: every head knocked out alone too (one run per layer, kept)


@dataclass(frozen=True)
class KnockResult:
    model: models.LoadedModel
    prompt: Prompt
    clean: np.ndarray  # (vocab,) next-token probabilities, every head in place
    ablated: np.ndarray  # (vocab,) with ``heads`` knocked out (the same array when none are)
    heads: tuple[Head, ...]
    mode: str
    first: bool  # the first token was knocked out too
    target: AnswerToken | None
    foil: AnswerToken | None
    looking: HeadRanking | None  # weight from the last token to the target's earlier occurrence
    ranking: AblationRanking | None  # step 2, when asked for: every head knocked out alone
    notices: tuple[str, ...]  # what was adjusted or could not be shown, for the message bar

    def logit_diff(self, probs: np.ndarray) -> float | None:
        """log p(target) − log p(foil): the logit difference (the normaliser cancels)."""
        if self.target is None or self.foil is None:
            return None
        return float(np.log(probs[self.target.id]) - np.log(probs[self.foil.id]))


def compute_knock(s: KnockState, progress: Progress | None = None) -> KnockResult:
    model = decoder(s.source, progress)
    prompt = read_prompt(model, s.prompt)
    target = _answer(model, s.target, s.prompt, "Target")
    foil = _answer(model, s.foil, s.prompt, "Foil")
    if target is not None and foil is not None:
        check_pair(target, foil)
    means = _means_for(s.source, s.mode)
    clean = clean_run(s.source, prompt.ids)
    probs = clean.probs
    with ablated(model, s.heads, s.mode, means, s.first) as heads:
        if heads:
            probs = next_token_probs(model, prompt.ids)
    notices = []
    if prompt.dropped:
        notices.append(prediction.cut_note(model, prompt.ids, prompt.dropped))
    looking = None
    if target is not None:
        try:
            looking = rank_by_attention(clean.attentions, prompt.ids, target)
        except ValueError as exc:
            notices.append(str(exc))
    ranking = None
    if s.ranked:  # every head knocked out alone (the set knocked out by hand aside), kept per answer
        if target is None or foil is None:
            raise ValueError("Name a target and a foil token first, e.g. Mary and John.")
        ranking = analysis_of(model).ranking(prompt.ids, target, foil, s.mode, s.first, progress)
    return KnockResult(
        model, prompt, clean.probs, probs, heads, s.mode, s.first, target, foil, looking, ranking,
        tuple(notices),
    )  # fmt: skip


# --- 3. Logit lens ------------------------------------------------------------------------------------
@dataclass(frozen=True)
class LensState:
    source: str = SMOLLM2
    prompt: str = IOI_PROMPT
    target: str = "Mary"


@dataclass(frozen=True)
class LensResult:
    model: models.LoadedModel
    prompt: Prompt
    lens: LogitLens
    top_pieces: np.ndarray  # (layers, T) object: the text of each top token
    target: AnswerToken | None
    refused: str  # why the target typed is not followed (not one token), or ""


def compute_lens(s: LensState, progress: Progress | None = None) -> LensResult:
    """The lens of the prompt; a prompt read before keeps its lens and reads only the new
    target's rank (typing a target costs ~15 ms instead of a whole lens). A target that is not one
    token is refused, the lens shown without it."""
    model = decoder(s.source, progress)
    prompt = read_prompt(model, s.prompt)
    try:
        target, refused = _answer(model, s.target, s.prompt, "Target"), ""
    except ValueError as exc:
        target, refused = None, str(exc)
    target_id = None if target is None else target.id
    streams = clean_run(s.source, prompt.ids).streams  # the forward pass the other steps share

    def whole_lens():
        lens = read_streams(model, streams, target_id)
        texts = {int(i): model.tokenizer.decode([int(i)]) for i in np.unique(lens.top_ids)}
        return lens, np.vectorize(texts.__getitem__, otypes=[object])(lens.top_ids)

    lens, pieces = analysis_of(model).lens(prompt.ids, whole_lens)
    if lens.target_id != target_id:
        lens = with_target(model, streams, lens, target_id)
    return LensResult(model, prompt, lens, pieces, target, refused)


# --- 4. Attention sinks -------------------------------------------------------------------------------
@dataclass(frozen=True)
class SinkState:
    source: str = SMOLLM2
    prompt: str = SINK_PROMPT


@dataclass(frozen=True)
class SinkResult:
    model: models.LoadedModel
    prompt: Prompt
    scores: np.ndarray  # (layers, heads) mean weight on position 0
    dropped: FirstTokenDropped


def compute_sinks(s: SinkState, progress: Progress | None = None) -> SinkResult:
    model = decoder(s.source, progress)
    prompt = read_prompt(model, s.prompt)
    scores = sink_scores(clean_run(s.source, prompt.ids).attentions)
    return SinkResult(model, prompt, scores, without_first_token(model, prompt.ids))


# --- 5. Induction heads -------------------------------------------------------------------------------
@dataclass(frozen=True)
class InductionState:
    source: str = SMOLLM2
    n: int = 30  # random tokens in one copy
    seed: int = 0
    heads: tuple[Head, ...] = ()  # knocked out
    mode: str = "zero"
    first: bool = False  # knock them out at the first token too


@dataclass(frozen=True)
class InductionResult:
    model: models.LoadedModel
    clean: InductionTest
    ablated: InductionTest | None  # None when no head is knocked out


def compute_induction(s: InductionState, progress: Progress | None = None) -> InductionResult:
    if not 2 <= s.n <= MAX_RANDOM:
        raise ValueError(f"Choose between 2 and {MAX_RANDOM} random tokens per copy.")
    model = decoder(s.source, progress)
    clean = analysis_of(model).induction(s.n, s.seed)
    ids = clean.ids
    knocked = None
    if s.heads:
        knocked = induction_test(model, ids, s.heads, s.mode, _means_for(s.source, s.mode), s.first)
    return InductionResult(model, clean, knocked)
