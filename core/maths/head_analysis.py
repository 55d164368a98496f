"""What a trained model's attention heads look at: numpy only, no torch.

A ``ModelAttention`` holds every head's weights for one input, shape (layers, heads, T, T), rows =
the token that looks, columns = the token looked at. The functions here rank heads (by one
from→to weight or by a named pattern) and re-express the weights over words instead of
sub-word pieces. Layer and head indices are 0-based in code; ``HeadScore.label`` prints them
1-based, the way people count them.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace

import numpy as np

PAIR_PARTS = ("A→A", "A→B", "B→A", "B→B")


@dataclass(frozen=True)
class ModelAttention:
    """Attention weights of every head for one input.

    ``attentions`` is float32, as the model computes it (a 512-token run of a 6 × 12 model
    is 75 MB; float64 would double that for no extra information).
    """

    tokens: tuple[str, ...]  # (T,) the tokenizer's own names, e.g. "[CLS]", "##ing", "Ġthe"
    labels: tuple[str, ...]  # (T,) readable text of each token, for axes and lists
    attentions: np.ndarray  # (layers, heads, T, T) float32; each row sums to 1
    is_causal: bool  # True when no token may look at a later one
    special: np.ndarray  # (T,) bool: tokens the tokenizer added, e.g. [CLS], [SEP]
    segment: np.ndarray  # (T,) int: 0 for sentence A, 1 for sentence B
    word_ids: np.ndarray  # (T,) int: which word each piece belongs to; −1 for special tokens
    words: tuple[str, ...] = ()  # (n_words,) text of each word, indexed by word_ids
    dropped: int = 0  # tokens cut off the end because the input was longer than the model allows

    @property
    def shape(self) -> tuple[int, int, int, int]:
        """(layers, heads, T, T)."""
        return tuple(self.attentions.shape)

    @property
    def is_pair(self) -> bool:
        """True when the input was a sentence pair A/B."""
        return bool(np.any(self.segment == 1))


@dataclass(frozen=True)
class HeadScore:
    """One head and its score; ``layer`` and ``head`` are 0-based indices."""

    layer: int
    head: int
    score: float

    @property
    def label(self) -> str:
        """Human numbering, counted from 1: 'layer 4, head 2'."""
        return f"layer {self.layer + 1}, head {self.head + 1}"

    def __str__(self) -> str:
        return f"{self.label}: {self.score:.2f}"


@dataclass(frozen=True)
class HeadRanking:
    """A score for every head, (layers, heads), and what it measures."""

    scores: np.ndarray  # (layers, heads)
    what: str

    @property
    def best(self) -> HeadScore:
        """The head with the highest score (the first one on ties)."""
        layer, head = np.unravel_index(int(np.argmax(self.scores)), self.scores.shape)
        return HeadScore(int(layer), int(head), float(self.scores[layer, head]))

    def ranked(self, top: int | None = None) -> list[HeadScore]:
        """Heads from the highest score down; ``top`` keeps only the first few."""
        order = np.argsort(-self.scores, axis=None, kind="stable")[:top]
        n_heads = self.scores.shape[1]
        return [HeadScore(int(i // n_heads), int(i % n_heads), float(self.scores.flat[i])) for i in order]


def clean(text: str) -> str:
    """Token or word text reduced for matching: lower case, no sub-word markers or spaces."""
    return text.strip().removeprefix("##").removeprefix("Ġ").removeprefix("▁").lower()


def token_index(result: ModelAttention, token: int | str) -> int:
    """Position of ``token``: an index, or text matched against tokens (first occurrence).

    Text may be written as shown ("it", "##ing") or plainly; case does not matter.
    """
    n = len(result.tokens)
    if isinstance(token, int | np.integer):
        if not 0 <= token < n:
            raise ValueError(f"Token position {token} is outside 0…{n - 1}.")
        return int(token)
    wanted = clean(str(token))
    if not wanted:
        raise ValueError("Name a token: the text is empty.")
    for names in (result.tokens, result.labels):
        for i, name in enumerate(names):
            if name.strip().lower() == str(token).strip().lower() or clean(name) == wanted:
                return i
    for w, word in enumerate(result.words):
        if clean(word) == wanted:
            pieces = ", ".join(result.labels[i] for i in np.flatnonzero(result.word_ids == w))
            raise ValueError(
                f"'{token}' is split into pieces here ({pieces}); name one piece, "
                "or join the pieces into words first."
            )
    shown = ", ".join(result.labels[:40]) + (" …" if n > 40 else "")
    raise ValueError(f"'{token}' is not one of the tokens. The tokens are: {shown}")


def find_head(result: ModelAttention, from_token: int | str, to_token: int | str) -> HeadRanking:
    """Rank every head by the weight the ``from_token`` row puts on the ``to_token`` column."""
    i, j = token_index(result, from_token), token_index(result, to_token)
    what = f"{result.labels[i]} → {result.labels[j]}"
    return HeadRanking(np.asarray(result.attentions[:, :, i, j], dtype=np.float64), what)


def offset_weight(attentions: np.ndarray, offset: int, first_row: int = 0) -> np.ndarray:
    """(..., T, T) weights → (...) mean over rows i ≥ ``first_row`` of the weight on token
    i + offset, for the rows where that token exists."""
    t = attentions.shape[-1]
    rows = np.arange(max(first_row, -offset), t - max(0, offset))
    return attentions[..., rows, rows + offset].astype(np.float64).mean(axis=-1)


def head_scores(weights: np.ndarray, length: int) -> tuple[np.ndarray, np.ndarray]:
    """weights (..., T, T) of sequences repeated after ``length`` tokens → induction and
    previous-token scores (...): a second-half token's weight on the token after its earlier copy
    (offset −(length − 1)), and every token's weight on the token just before it."""
    return offset_weight(weights, 1 - length, first_row=length), offset_weight(weights, -1)


def _offset_score(result: ModelAttention, offset: int) -> np.ndarray:
    """Mean over rows i of the weight on token i + offset, for rows where that token exists."""
    if len(result.tokens) < 2:
        raise ValueError("Neighbour patterns need at least two tokens; type a longer text.")
    return offset_weight(result.attentions, offset)


def previous_token(result: ModelAttention) -> np.ndarray:
    """(layers, heads) mean weight each token puts on the token just before it."""
    return _offset_score(result, -1)


def next_token(result: ModelAttention) -> np.ndarray:
    """(layers, heads) mean weight each token puts on the token just after it (0 when causal)."""
    return _offset_score(result, +1)


def special_tokens(result: ModelAttention) -> np.ndarray:
    """(layers, heads) mean over tokens of the total weight on added tokens such as [CLS]/[SEP]."""
    if not result.special.any():
        raise ValueError(
            "This model adds no special tokens such as [CLS] or [SEP], so no head can park on them."
        )
    return result.attentions[..., result.special].astype(np.float64).sum(axis=-1).mean(axis=-1)


def same_word(result: ModelAttention) -> np.ndarray:
    """(layers, heads) mean weight a token puts on other copies of itself (e.g. 'the' … 'the').

    Averaged over the tokens whose text occurs more than once (special tokens excluded).
    """
    keys = np.array([clean(t) for t in result.tokens], dtype=object)
    same = (keys[:, None] == keys[None, :]) & ~np.eye(len(keys), dtype=bool)
    same &= ~result.special[:, None] & ~result.special[None, :]
    rows = same.any(axis=1)
    if not rows.any():
        raise ValueError(
            "No word occurs twice in this text; type a sentence that repeats a word, "
            "e.g. 'the cat saw the dog'."
        )
    per_row = np.einsum("lhij,ij->lhi", result.attentions[..., rows, :], same[rows].astype(np.float32))
    return per_row.astype(np.float64).mean(axis=-1)  # (L, H)


PATTERNS: dict[str, tuple[str, Callable[[ModelAttention], np.ndarray]]] = {
    "previous": ("previous token", previous_token),
    "next": ("next token", next_token),
    "special": ("attends to [CLS]/[SEP]", special_tokens),
    "same_word": ("same word elsewhere", same_word),
}


def find_pattern(result: ModelAttention, pattern: str) -> HeadRanking:
    """Rank every head by how strongly it shows ``pattern`` (a key of ``PATTERNS``)."""
    if pattern not in PATTERNS:
        raise ValueError(f"Unknown pattern '{pattern}'; choose one of {', '.join(PATTERNS)}.")
    title, score = PATTERNS[pattern]
    return HeadRanking(score(result), title)


def to_words(result: ModelAttention) -> ModelAttention:
    """Join sub-word pieces into words: weight *to* a word is the sum over its pieces, weight
    *from* a word is the mean over its pieces, so every row still sums to 1. Special tokens stay
    as they are.
    """
    groups: list[list[int]] = []
    names: list[str] = []
    for i, w in enumerate(result.word_ids):
        if w >= 0 and i > 0 and result.word_ids[i - 1] == w:
            groups[-1].append(i)
            continue
        groups.append([i])
        names.append(result.words[w] if w >= 0 else result.labels[i])
    starts = np.array([idx[0] for idx in groups])
    sizes = np.array([len(idx) for idx in groups], dtype=np.float64)
    a = result.attentions.astype(np.float64)
    into = np.add.reduceat(a, starts, axis=-1)  # (L, H, T, W): summed over the pieces looked at
    merged = np.add.reduceat(into, starts, axis=-2) / sizes[:, None]  # (L, H, W, W)
    return replace(
        result,
        tokens=tuple(names),
        labels=tuple(names),
        attentions=merged.astype(np.float32),
        special=result.special[starts],
        segment=result.segment[starts],
        word_ids=np.where(result.special[starts], -1, np.arange(len(groups))),
        words=tuple(names),
    )


def drop_special(result: ModelAttention, renormalize: bool = True) -> ModelAttention:
    """Hide [CLS]/[SEP]-like tokens. With ``renormalize`` each remaining row is rescaled to sum
    to 1 over the tokens left, so the weight a head parked on them no longer dims the rest.
    """
    keep = ~result.special
    if not keep.any():
        raise ValueError("The text has only special tokens; there is nothing left to show.")
    a = result.attentions[..., keep, :][..., keep].astype(np.float64)
    if renormalize:
        total = a.sum(axis=-1, keepdims=True)
        a = np.divide(a, total, out=np.zeros_like(a), where=total > 0)
    idx = np.flatnonzero(keep)
    return replace(
        result,
        tokens=tuple(result.tokens[i] for i in idx),
        labels=tuple(result.labels[i] for i in idx),
        attentions=a.astype(np.float32, order="C"),  # the indexing above left it strided
        special=result.special[keep],
        segment=result.segment[keep],
        word_ids=result.word_ids[keep],
    )


def pair_mask(result: ModelAttention, part: str) -> np.ndarray:
    """(T, T) bool: True for the cells of one sentence-pair block, e.g. "A→B" = rows of A, columns
    of B. The "→" may be written "->".
    """
    part = part.replace("->", "→").upper()
    if part not in PAIR_PARTS:
        raise ValueError(f"Choose one of {', '.join(PAIR_PARTS)}; got '{part}'.")
    if not result.is_pair:
        raise ValueError("This is a single sentence; give a second sentence (B) to compare A and B.")
    src, dst = ("AB".index(part[0]), "AB".index(part[-1]))
    return (result.segment == src)[:, None] & (result.segment == dst)[None, :]


def only_part(result: ModelAttention, part: str) -> ModelAttention:
    """Keep the weights of one sentence-pair block (e.g. "A→B"); every other weight becomes 0."""
    keep = pair_mask(result, part)
    return replace(result, attentions=np.where(keep, result.attentions, np.float32(0.0)))


def express(
    raw: ModelAttention,
    words: bool = False,
    hide_special: bool = False,
    rescale: bool = True,
    part: str = "all",
) -> ModelAttention:
    """``raw`` as the panel shows it: pieces joined into words, [CLS]/[SEP] hidden (rows
    rescaled to 1 if ``rescale``), and only one part of a sentence pair ("A→B" …; "all": every
    part), in that order. ValueError when an option does not apply to this text."""
    r = raw
    if words:
        r = to_words(r)
    if hide_special:
        r = drop_special(r, renormalize=rescale)
    if part != "all":
        r = only_part(r, part)
    return r
