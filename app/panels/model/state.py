"""The Real model panel's states and what they compute (Qt-free).

Two live states, both computed in the worker: ``RunState`` (the model and the texts: one run of
the model) and ``ViewState`` (how that run is shown: pieces joined into words, [CLS]/[SEP]
hidden, one part of a sentence pair). Changing the view never runs the model again; at 500
tokens re-expressing the weights takes up to a second, so it too runs off the UI thread.

    run = compute_run(RunState(model, "The trophy didn't fit in the suitcase."))
    shown = compute_view(ViewState(run, words=True))
    shown.attention.shape  # (layers, heads, words, words)
    shown.tiles.maps.shape  # (layers, heads, ≤64, ≤64): the model view's tiles
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

from core import models
from core.maths.head_analysis import PATTERNS, HeadRanking, ModelAttention, express, find_pattern
from core.maths.head_tiles import HeadTiles, head_tiles
from core.models.attention_run import TROPHY

DEFAULT_TEXT = TROPHY
DEFAULT_FROM, DEFAULT_TO = "it", "trophy"
ALL_PARTS = "all"
Progress = Any  # progress(done, total), raising once the request is superseded


@dataclass(frozen=True)
class RunState:
    model: Any = None  # core.models.LoadedModel, None until one is loaded
    text: str = DEFAULT_TEXT
    text_b: str = ""  # a second sentence, read as a pair with [SEP]; empty: none


def compute_run(s: RunState, progress: Progress | None = None) -> ModelAttention | None:
    """Every head's weights for the texts of ``s`` (None before a model is loaded)."""
    if s.model is None:
        return None
    if progress is not None:
        progress(0, 1)  # a request superseded while it waited stops here, before the model runs
    return models.run(s.model, s.text, s.text_b)


@dataclass(frozen=True)
class ViewState:
    raw: ModelAttention | None = None  # what the model returned for the current texts
    words: bool = False
    hide_special: bool = False
    rescale: bool = True  # with hide_special: rows divided by what is left
    part: str = ALL_PARTS  # "A→B" …: only the weights of one part of a sentence pair


@dataclass(frozen=True)
class Shown:
    state: ViewState  # the options this was expressed with: a single sentence has no pair filter
    attention: ModelAttention  # raw, re-expressed by the options
    patterns: dict[str, HeadRanking | str]  # per pattern: every head ranked, or why it does not apply
    tiles: HeadTiles  # every head shrunk for the model view (block means past 64 tokens)


def compute_view(s: ViewState, progress: Progress | None = None) -> Shown | None:
    """``s.raw`` re-expressed by the options (core.maths.head_analysis.express), ranked on every
    pattern and shrunk to the model view's tiles; ValueError when an option does not apply."""
    if s.raw is None:
        return None
    if progress is not None:
        progress(0, 1)
    if not s.raw.is_pair and s.part != ALL_PARTS:
        s = replace(s, part=ALL_PARTS)
    attention = express(s.raw, s.words, s.hide_special, s.rescale, s.part)
    return Shown(s, attention, rank_patterns(attention), head_tiles(attention.attentions))


def rank_patterns(attention: ModelAttention) -> dict[str, HeadRanking | str]:
    """Every head ranked on each pattern of core.maths.head_analysis.PATTERNS, or why it cannot be."""
    ranked: dict[str, HeadRanking | str] = {}
    for key in PATTERNS:
        try:
            ranked[key] = find_pattern(attention, key)
        except ValueError as exc:
            ranked[key] = str(exc)
    return ranked


def numbered(labels: tuple[str, ...]) -> list[str]:
    """Token labels made unique for a list: the second "the" becomes "the #2"."""
    seen: dict[str, int] = {}
    items = []
    for label in labels:
        seen[label] = seen.get(label, 0) + 1
        items.append(label if seen[label] == 1 else f"{label} #{seen[label]}")
    return items


def describe_cell(shown: Shown, layer: int, head: int, i: int, j: int) -> str:
    """What cell (i, j) of head (layer, head), 0-based, shows under the options it was drawn with."""
    o = shown.state
    text = f"layer {layer + 1}, head {head + 1}"
    if o.words:
        text += " · words: sum into a word, mean out of it"
    if o.hide_special:
        text += " · share of what is left without [CLS]/[SEP]" if o.rescale else " · [CLS]/[SEP] hidden"
    if o.part != ALL_PARTS:
        src, dst = "AB".index(o.part[0]), "AB".index(o.part[-1])
        segment = shown.attention.segment
        if not (segment[i] == src and segment[j] == dst):
            text += f" · outside the {o.part} filter, shown as 0"
    return text


def cut_notice(raw: ModelAttention) -> str:
    """Why the text is shorter than typed, or "" when nothing was cut."""
    if not raw.dropped:
        return ""
    return (
        f"The text is longer than this model reads: it was cut to {raw.shape[-1]} tokens "
        f"and the last {raw.dropped} tokens were dropped."
    )
