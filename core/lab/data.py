"""The induction task: random token sequences shown twice, and sequences typed by a person.

In the first half every token is drawn at random, so no model can do better than guessing (ln V
nats per token). The second half repeats the first, so a model that finds the earlier copy of the
current token and reads the token after it can predict the rest exactly: that is an induction head.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # torch is the optional 'models' extra: parse_sequence and shortest work without it
    import torch


def shortest(length: int) -> int:
    """The shortest block used in training when the longest is ``length``: about half of it."""
    return (length + 1) // 2


def repeated_sequences(
    generator: torch.Generator, batch: int, length: int, vocab: int, varied: bool = False
) -> torch.Tensor:
    """(batch, 2·length) int64: a block of uniform random tokens in 0…vocab−1, repeated until the
    row is full. The block is ``length`` tokens, so it is shown exactly twice; with ``varied`` each
    row draws its own block length from shortest(length)…length (two to four copies).

    With one fixed block length a one-layer model can cheat: a head that always looks back exactly
    length − 1 positions finds the next token without reading any token. Varied lengths leave only
    the real induction mechanism, which needs two layers.
    """
    import torch

    raw = torch.randint(vocab, (batch, 2 * length), generator=generator)  # (B, 2L)
    if varied:
        period = torch.randint(shortest(length), length + 1, (batch, 1), generator=generator)  # (B, 1)
    else:
        period = torch.full((batch, 1), length)
    return raw.gather(1, torch.arange(2 * length) % period)  # position p copies position p mod n


def parse_sequence(text: str, vocab: int, context: int) -> list[int]:
    """Token numbers typed as '3 17 42 3 17 42' (spaces or commas) → a list of ints.

    Raises ValueError naming the first bad token, or when there are fewer than 2 or more than
    ``context`` tokens.
    """
    words = [w for w in re.split(r"[\s,;]+", text.strip()) if w]
    allowed = f"numbers from 0 to {vocab - 1}"
    tokens = []
    for word in words:
        if not re.fullmatch(r"[+-]?\d+", word):
            raise ValueError(f"'{word[:20]}' is not a token number; type {allowed} separated by spaces.")
        token = int(word)
        if not 0 <= token < vocab:
            raise ValueError(f"Token {word[:20]} is outside the vocabulary; use {allowed}.")
        tokens.append(token)
    if len(tokens) < 2:
        raise ValueError(f"Type at least two tokens ({allowed}), e.g. '5 9 2 5 9 2'.")
    if len(tokens) > context:
        raise ValueError(
            f"The model has {context} positions; type at most {context} tokens, not {len(tokens)}."
        )
    return tokens
