"""Which heads matter for one prediction: rank them by knocking each out, and by attention weight.

    target = answer_token(tokenizer, " Mary", prompt)       # one token, or ValueError
    foil = answer_token(tokenizer, " John", prompt)
    ranking = rank_by_ablation(model, ids, target, foil)    # every head knocked out alone
    ranking.ranking.best                                     # the head whose loss hurts most
    rank_by_attention(attentions, ids, target)              # last token → the target's earlier copy

The score of a head is how much knocking it out alone lowers the logit difference
logit(target) − logit(foil) at the last position. The first position keeps every head's output
unless ``first=True`` (see core.interp.ablation: there a head mostly feeds the attention sink).
All heads of one layer are knocked out in one hooked run: the prompt runs once, unbatched,
through the layers before, and is repeated along the batch dimension (one row per head) from
that layer on (``fan_out``), so no layer is computed twice for nothing.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from core.decoder.adapter import adapter_of
from core.decoder.run import hooked_run
from core.interp.ablation import knockout
from core.maths.head_analysis import HeadRanking

__all__ = [
    "AblationRanking", "AnswerToken", "Progress", "answer_pair", "answer_token", "check_pair",
    "continuation", "rank_by_ablation", "rank_by_attention"
]  # fmt: skip

Progress = Callable[[int, int], None]


@dataclass(frozen=True)
class AnswerToken:
    """A token the prediction is judged by: its id and how it reads."""

    id: int
    text: str  # the piece as the model sees it, e.g. " Mary"


def continuation(prompt: str, text: str) -> str:
    """``text`` as a person means it after ``prompt``: a word (its first character a letter or a
    digit) after a prompt that does not end in a space gets the space that separates it ("Mary" →
    " Mary"); punctuation and text that starts with a space are read as typed."""
    gap = prompt and not prompt[-1].isspace() and text[:1].isalnum()
    return " " * bool(gap) + text


def answer_token(tokenizer: Any, text: str, prompt: str = "", what: str = "Target") -> AnswerToken:
    """The token ``text`` stands for as the continuation of ``prompt`` (``continuation``: "Mary"
    after a prompt is " Mary"). ValueError, its message starting with ``what`` (the box or flag
    it came from), on empty text, and on text of several tokens: the message names its pieces
    and, where the first is more than a letter (" Mary" of " Maryanne"), offers it as the one to type.
    """
    if not text.strip():
        raise ValueError(f"{what}: the text is empty; name one token, e.g. ' Mary'.")
    text = continuation(prompt, text)
    ids = tokenizer(text, add_special_tokens=False)["input_ids"]
    if len(ids) != 1:
        pieces = [tokenizer.decode([i]) for i in ids]
        spelling = f", e.g. {pieces[0]!r}" if len(pieces[0].strip()) > 1 else ""  # a word, not a letter
        raise ValueError(
            f"{what}: {text!r} is {len(ids)} tokens here ({' + '.join(map(repr, pieces))}), not one: "
            f"type one token{spelling}."
        )
    return AnswerToken(int(ids[0]), tokenizer.decode(ids))


def answer_pair(tokenizer: Any, target: str, foil: str, prompt: str = "") -> tuple[AnswerToken, AnswerToken]:
    """The target's and the foil's tokens (``answer_token``); ValueError when either is not one
    token or they are the same."""
    pair = answer_token(tokenizer, target, prompt, "Target"), answer_token(tokenizer, foil, prompt, "Foil")
    check_pair(*pair)
    return pair


def check_pair(target: AnswerToken, foil: AnswerToken) -> None:
    """ValueError when the target and the foil are the same token."""
    if target.id == foil.id:
        raise ValueError(
            f"The target and the foil are the same token ({target.text!r}); choose a different "
            "foil, e.g. the other name in the sentence."
        )


@dataclass(frozen=True)
class AblationRanking:
    """The logit difference target − foil, clean and with each head knocked out alone."""

    clean: float
    ablated: np.ndarray  # (layers, heads) logit difference with that head knocked out
    target: AnswerToken
    foil: AnswerToken
    mode: str
    first: bool = False  # the first position was knocked out too

    @property
    def drop(self) -> np.ndarray:
        """(layers, heads): how much knocking the head out lowers the logit difference."""
        return self.clean - self.ablated

    @property
    def relative_drop(self) -> np.ndarray:
        """(layers, heads): ``drop`` over the size of the clean difference (1 = all of it lost;
        the plain drop when the clean difference is 0)."""
        return self.drop / (abs(self.clean) or 1.0)

    @property
    def ranking(self) -> HeadRanking:
        """Heads ranked by ``drop``, the biggest first."""
        where = ", first token too" if self.first else ""
        what = f"drop in logit({self.target.text!r}) − logit({self.foil.text!r}) ({self.mode}{where})"
        return HeadRanking(self.drop, what)


def rank_by_ablation(
    model: Any,
    ids: Sequence[int],
    target: AnswerToken,
    foil: AnswerToken,
    mode: str = "zero",
    means: np.ndarray | None = None,
    progress: Progress | None = None,
    first: bool = False,
) -> AblationRanking:
    """Knock every head out alone and measure the logit difference at the last position
    (at the first position too with ``first``).

    One forward pass per layer with one batch row per head. ``progress(done, total)`` is called
    before the first pass and after each (total = layers); raising from it cancels, and the model
    is left clean.
    """
    check_pair(target, foil)
    import torch

    adapter = adapter_of(model.module)
    shape = adapter.shape
    if len(ids) == 0:
        raise ValueError("Type some text first: the model needs at least one token.")

    def difference(edits=(), fan_out=None):  # (batch,) logit(target) − logit(foil) at the last position
        normed = hooked_run(model, ids, edits=edits, fan_out=fan_out, unembed=False).normed[:, -1].float()
        logits = adapter.token_logits(normed, [target.id, foil.id])
        return logits[:, 0] - logits[:, 1]

    tick = progress or (lambda done, total: None)
    tick(0, shape.layers)
    with torch.inference_mode():
        clean = float(difference()[0])
        ablated = np.zeros((shape.layers, shape.heads))
        one_each = np.zeros((shape.heads, shape.layers, shape.heads), dtype=bool)
        for layer in range(shape.layers):
            one_each[:] = False
            one_each[np.arange(shape.heads), layer, np.arange(shape.heads)] = True
            edits = knockout(shape, one_each, mode, means, first)
            ablated[layer] = difference(edits, (layer, shape.heads)).numpy()
            tick(layer + 1, shape.layers)
    return AblationRanking(clean, ablated, target, foil, mode, first)


def rank_by_attention(attentions: np.ndarray, ids: Sequence[int], target: AnswerToken) -> HeadRanking:
    """Heads ranked by the weight from the last token to the target's latest earlier occurrence.

    ``attentions`` (layers, heads, T, T) for the prompt ``ids`` (T,). ValueError when the target
    does not occur before the last token.
    """
    earlier = np.flatnonzero(np.asarray(ids)[:-1] == target.id)
    if earlier.size == 0:
        raise ValueError(
            f"{target.text!r} does not occur earlier in the prompt, so no head can look back at "
            "it; put it in the prompt (as in 'When Mary and John …, John gave a drink to')."
        )
    j = int(earlier[-1])
    return HeadRanking(
        np.asarray(attentions[:, :, -1, j], dtype=np.float64),
        f"weight from the last token to {target.text!r} (position {j + 1})",
    )
