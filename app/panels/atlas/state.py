"""The Head atlas panel's state and computation, Qt-free; a decoder, or an encoder with the scores
that apply to it.

One state for every step: the model, the two probes (the text, the random tokens' count, seed
and smallest id), the chosen head (layer and head from 1), the score the list is sorted by, how the cloud is
drawn and the token step 4 feeds the head. The atlas of a model and its probes is computed once
(``core.interp.atlas``, ~1.6 s on SmolLM2) and kept; another head costs milliseconds.

    r = compute_atlas(AtlasState(source=folder, layer=2, head=1))
    r.atlas.scores["induction"], r.cloud.points, r.ov.out_tokens
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from core import models
from core.interp import atlas as atlases
from core.interp.analysis import analysis_of
from core.interp.ranking import answer_token
from core.interp.token_text import visible
from core.models.loaded import shared as loaded_models

LISTED = 12  # heads in the sorted list
COLOURS = ("position", "token")  # how the cloud colours its points
Progress = Callable[[int, int], None]


@dataclass(frozen=True)
class AtlasState:
    source: str = "smollm2"
    text: str = atlases.NATURAL
    length: int = atlases.LENGTH
    seed: int = 0
    low: int = atlases.LOW  # the random tokens' smallest id
    layer: int = 19  # from 1: SmolLM2's layer 19, head 7 scores 0.94 as an induction head
    head: int = 7
    score: str = "induction"  # the score the list of heads is sorted by
    together: bool = False  # step 3: every query head that shares the chosen head's keys
    colour: str = "position"  # step 3: one of COLOURS
    token: str = " Mary"  # step 4: the token the head reads
    answer: str = "When Mary and John went to the store, John gave a drink to"  # step 1's last map:
    target: str = "Mary"  # each head's direct share of logit(target) − logit(foil) after this prompt
    foil: str = "John"  # (either empty: no such map)


@dataclass(frozen=True)
class AtlasResult:
    model: models.LoadedModel
    atlas: atlases.HeadAtlas
    layer: int  # 0-based
    head: int
    ranking: tuple[tuple[int, int, float], ...]  # (layer, head, value) 0-based, by the state's score
    text_labels: tuple[str, ...]  # the probes' tokens as shown
    repeat_labels: tuple[str, ...]
    cloud: atlases.QKCloud
    ov: atlases.OVReading | None  # None for an encoder, or a token that is not one
    unread: str  # why ``ov`` is None, or ""
    direct: np.ndarray | None  # (layers, heads) each head's direct share of the answer, or None
    notice: str  # what the direct shares leave out, or why a score's list is empty, or ""

    def piece(self, token: int) -> str:
        return visible(self.model.tokenizer.decode([token]))


def compute_atlas(s: AtlasState, progress: Progress | None = None) -> AtlasResult:
    """Every step for the head of ``s``; ValueError saying what to change. An encoder gets the
    scores that apply to it, its probes and its cloud."""
    model = loaded_models.get(s.source, progress)
    if s.score not in atlases.SCORES:
        raise ValueError(f"Unknown score {s.score!r}; choose one of {', '.join(atlases.SCORES)}.")
    if not (1 <= s.layer <= model.n_layers and 1 <= s.head <= model.n_heads):
        raise ValueError(
            f"Layer {s.layer}, head {s.head} does not exist: {model.name} has layers 1 to "
            f"{model.n_layers} and heads 1 to {model.n_heads}."
        )
    atlas = analysis_of(model).once(
        "atlas",
        (s.text, s.length, s.seed, s.low),
        lambda: atlases.head_atlas(model, s.text, s.length, s.seed, s.low),
        keep=2,
    )
    layer, head = s.layer - 1, s.head - 1
    group = model.n_heads // model.n_kv_heads if model.n_kv_heads else 1
    heads = range(head - head % group, head - head % group + group) if s.together else [head]
    decoder = model.kind == models.DECODER
    ov, unread = _ov(model, s, layer, head, atlas)
    direct, notices = _direct(model, s) if decoder else (None, ())
    notices += (unread,) if decoder and unread else ()  # a token refused: step 4 says so too
    notices = ((atlas.cut,) if atlas.cut else ()) + notices  # what a long text lost, first
    if s.score in atlas.missing:
        notices += (f"The list is empty: the {s.score.replace('_', '-')} score does not apply here, as "
                    f"{atlas.missing[s.score]}; sort by another score.",)  # fmt: skip
    scores = atlas.scores.get(s.score, np.zeros((0, 1)))
    order = np.argsort(-scores, axis=None)[:LISTED]
    piece = model.tokenizer.decode
    return AtlasResult(
        model=model,
        atlas=atlas,
        layer=layer,
        head=head,
        ranking=tuple(
            (int(k // scores.shape[1]), int(k % scores.shape[1]), float(scores.flat[k])) for k in order
        ),
        text_labels=tuple(visible(piece([t])) for t in atlas.text_ids),
        repeat_labels=tuple(visible(piece([t])) for t in atlas.repeat_ids),
        cloud=atlases.qk_cloud(atlas, layer, list(heads)),
        ov=ov,
        unread=unread,
        direct=direct,
        notice=" ".join(notices),
    )


def _ov(
    model: models.LoadedModel, s: AtlasState, layer: int, head: int, atlas: atlases.HeadAtlas
) -> tuple[atlases.OVReading | None, str]:
    """Step 4's reading of the head with ``s.token`` fed in, or None and why not (an encoder has no
    unembedding; a token of several pieces is refused): the other steps stand without it."""
    if model.kind != models.DECODER:
        return None, atlas.missing["copying"]
    try:
        token = answer_token(model.tokenizer, s.token, what="Token")
    except ValueError as exc:
        return None, str(exc)
    return atlases.ov_reading(model, layer, head, token.id), ""


def _direct(model: models.LoadedModel, s: AtlasState) -> tuple[np.ndarray | None, tuple[str, ...]]:
    """Each head's direct share of logit(target) − logit(foil) at the end of ``s.answer`` (the
    final norm's scale frozen, core.interp.head), and notices; None without a target and a foil,
    or when they do not make an answer (a notice says why)."""
    if not (s.target.strip() and s.foil.strip()):
        return None, ()
    try:  # the atlas stands without it: a bad answer only empties its map
        return atlases.direct_map(model, s.answer, s.target, s.foil)
    except ValueError as exc:
        return None, (f"Direct shares: {exc}",)
