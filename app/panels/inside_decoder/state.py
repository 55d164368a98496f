"""The Inside a decoder panel's states and computations, Qt-free.

Every step reads the same decoder, shared with the other panels through core.loaded_models
(``decoder``); every compute
runs in the worker and raises ValueError with a message for bad input. Layers and heads are
0-based here and 1-based on screen.

    r = compute_knock(KnockState(source=folder, heads=((5, 2),)))
    r.clean.shape == r.ablated.shape == (vocab,)
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from core import decoder as dec
from core import models
from core.ablation import (
    MEAN_REFERENCE,
    Head,
    ablated,
    head_means,
    next_token_probs,
    recording,
    run,
    shape_of,
    stacked,
)
from core.ablation_ranking import (
    AblationRanking,
    AnswerToken,
    answer_token,
    check_pair,
    rank_by_ablation,
    rank_by_attention,
)
from core.attention import softmax
from core.attention_sinks import FirstTokenDropped, sink_scores, without_first_token
from core.decoder_induction import InductionTest, induction_test, random_induction_test
from core.head_analysis import HeadRanking
from core.loaded_models import shared as loaded_models
from core.logit_lens import LogitLens, read_streams, with_target

SMOLLM2 = "smollm2"
IOI_PROMPT = "When Mary and John went to the store, John gave a drink to"
SINK_PROMPT = "The capital of France is Paris, and the capital of Italy is"
TOP = 8  # next-token candidates listed
MAX_RANDOM = 200  # random tokens in one copy of the induction sequence
Progress = Callable[[int, int], None]

_lock = threading.Lock()  # steps compute in parallel and share what follows
_models: dict[str, models.LoadedModel] = {}  # source -> the decoder the kept numbers below are of
_means: dict[str, np.ndarray] = {}  # source -> each head's mean output over MEAN_REFERENCE
_clean: OrderedDict[tuple, CleanRun] = OrderedDict()  # (source, ids) -> the intact model's run
_clean_lock = threading.Lock()  # one intact run per prompt: a second step asking for it waits
_induction: dict[tuple, InductionTest] = {}  # (source, n, seed) -> the intact model's test
_lenses: OrderedDict[tuple, tuple] = OrderedDict()  # (source, ids) -> (lens, its top tokens' text)
KEPT_RUNS = 8  # prompts whose intact run and lens are kept


def decoder(source: str, progress: Progress | None = None) -> models.LoadedModel:
    """The decoder ``source`` names ("smollm2" or a folder), loaded on first use; ValueError for
    an encoder or a folder that holds no model."""
    model = loaded_models.get(source, progress, expect=models.DECODER)  # one load, shared
    with _lock:
        if _models.get(source) is not model:  # another decoder: what was kept is not its numbers
            shape_of(model.module)  # refuse, with a reason, a decoder not laid out like Llama
            for kept in (_models, _means, _clean, _induction, _lenses):
                kept.clear()
            _models[source] = model
    return model


def means_of(source: str) -> np.ndarray:
    """(layers, heads, head_dim): each head's mean output over the reference text."""
    model = decoder(source)
    with _lock:
        if source not in _means:
            _means[source] = head_means(model.module, model.tokenizer(MEAN_REFERENCE)["input_ids"])
        return _means[source]


@dataclass(frozen=True)
class CleanRun:
    """One forward pass of the intact model over a prompt, shared by every step that reads it."""

    probs: np.ndarray  # (vocab,) next-token probabilities
    attentions: np.ndarray  # (layers, heads, T, T) weights
    streams: Any  # (layers, T, hidden) torch: the residual stream after each layer


def clean_run(source: str, ids: tuple[int, ...]) -> CleanRun:
    """The intact model's run over ``ids``, computed once per prompt: a step that asks for a
    prompt another step is running waits for that run instead of starting a second one."""
    key = (source, ids)
    with _clean_lock:
        if key not in _clean:
            module = decoder(source).module
            with recording(module.model.layers) as seen:
                logits, attentions = run(module, ids, attentions=True)
            _clean[key] = CleanRun(softmax(logits[-1].astype(np.float64)), attentions, stacked(seen))
            while len(_clean) > KEPT_RUNS:
                _clean.popitem(last=False)
        return _clean[key]


@dataclass(frozen=True)
class Prompt:
    """A prompt as the model reads it."""

    ids: tuple[int, ...]
    pieces: tuple[str, ...]
    dropped: int  # tokens cut from the start to fit the context


def read_prompt(model: models.LoadedModel, text: str) -> Prompt:
    ids, dropped = dec.encode(model, text)
    return Prompt(tuple(ids), dec.pieces(model, ids), dropped)


def top_tokens(model: models.LoadedModel, probs: np.ndarray, k: int = TOP) -> list[tuple[str, float]]:
    """The ``k`` most probable next tokens as (text, probability), most probable first."""
    order = np.argsort(-probs)[:k]
    return [(model.tokenizer.decode([int(i)]), float(probs[i])) for i in order]


def _answer(model: models.LoadedModel, text: str, prompt: str, what: str) -> AnswerToken | None:
    if not text.strip():
        return None
    try:
        return answer_token(model.tokenizer, text, prompt)
    except ValueError as exc:
        raise ValueError(f"{what}: {exc}") from exc


def _means_for(source: str, mode: str) -> np.ndarray | None:
    """The heads' mean outputs when ``mode`` is "mean" (None for zero-ablation)."""
    return means_of(source) if mode == "mean" else None


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
    with ablated(model.module, s.heads, s.mode, means, s.first) as heads:
        if heads:
            probs = next_token_probs(model.module, prompt.ids)
    notices = [t.notice for t in (target, foil) if t is not None and t.notice]
    if prompt.dropped:
        notices.append(f"The prompt was cut to its last {len(prompt.ids)} tokens.")
    looking = None
    if target is not None:
        try:
            looking = rank_by_attention(clean.attentions, prompt.ids, target)
        except ValueError as exc:
            notices.append(str(exc))
    return KnockResult(
        model, prompt, clean.probs, probs, heads, s.mode, s.first, target, foil, looking, tuple(notices)
    )


def compute_ranking(s: KnockState, progress: Progress | None = None) -> AblationRanking:
    """Every head knocked out alone (the knocked-out set of ``s`` is ignored); in the worker."""
    model = decoder(s.source)
    target, foil = _answer(model, s.target, s.prompt, "Target"), _answer(model, s.foil, s.prompt, "Foil")
    if target is None or foil is None:
        raise ValueError("Name a target and a foil token first, e.g. Mary and John.")
    prompt = read_prompt(model, s.prompt)
    means = _means_for(s.source, s.mode)
    return rank_by_ablation(model.module, prompt.ids, target, foil, s.mode, means, progress, s.first)


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


def compute_lens(s: LensState, progress: Progress | None = None) -> LensResult:
    """The lens of the prompt; a prompt read before keeps its lens and reads only the new
    target's rank (typing a target costs ~15 ms instead of a whole lens)."""
    model = decoder(s.source, progress)
    prompt = read_prompt(model, s.prompt)
    target = _answer(model, s.target, s.prompt, "Target")
    target_id = None if target is None else target.id
    streams = clean_run(s.source, prompt.ids).streams  # the forward pass the other steps share
    key = (s.source, prompt.ids)
    with _lock:
        kept = _lenses.get(key)
    if kept is not None:
        lens, pieces = kept
        return LensResult(model, prompt, with_target(model.module, streams, lens, target_id), pieces, target)
    lens = read_streams(model.module, streams, target_id)
    texts = {int(i): model.tokenizer.decode([int(i)]) for i in np.unique(lens.top_ids)}
    pieces = np.vectorize(texts.__getitem__, otypes=[object])(lens.top_ids)
    with _lock:
        _lenses[key] = (lens, pieces)
        while len(_lenses) > KEPT_RUNS:
            _lenses.popitem(last=False)
    return LensResult(model, prompt, lens, pieces, target)


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
    return SinkResult(model, prompt, scores, without_first_token(model.module, prompt.ids))


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
    key = (s.source, s.n, s.seed)
    if key not in _induction:
        _induction.clear()
        _induction[key] = random_induction_test(model.module, model.tokenizer, s.n, s.seed)
    clean = _induction[key]
    ids = clean.ids
    knocked = None
    if s.heads:
        knocked = induction_test(model.module, ids, s.heads, s.mode, _means_for(s.source, s.mode), s.first)
    return InductionResult(model, clean, knocked)
