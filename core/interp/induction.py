"""Induction heads in a trained decoder such as SmolLM2: random tokens repeated twice.

    ids = repeated_random_tokens(vocab_size=49152, n=30, rng=np.random.default_rng(0))
    test = induction_test(model, ids)                    # clean
    test.induction.shape                                 # (layers, heads)
    induction_test(model, ids, heads=[(4, 1)]).loss_second    # with a head knocked out

The first copy is unpredictable; in the second copy each next token can be read off the first:
find where the current token occurred before and copy the token that followed it. An induction
head does that lookup: from position n + k it attends to position k + 1. A previous-token head
in an earlier layer helps it by writing "my predecessor was …" into each position.

Scores and the split of the loss into the two copies are those of the attention-only model
trained in ``core.lab.training`` (``core.maths.head_analysis.head_scores``), so both panels
measure the same thing.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from core.decoder.adapter import adapter_of
from core.interp.ablation import Head, ablated, run
from core.maths.head_analysis import head_scores

__all__ = ["InductionTest", "induction_test", "random_induction_test", "repeated_random_tokens"]


def repeated_random_tokens(
    vocab_size: int, n: int, rng: np.random.Generator, exclude: Iterable[int] = ()
) -> np.ndarray:
    """(2n,) int: ``n`` distinct random token ids (none from ``exclude``), then the same again."""
    allowed = np.setdiff1d(np.arange(vocab_size), np.fromiter(exclude, dtype=np.int64))
    if not 2 <= n <= allowed.size:
        raise ValueError(f"Choose between 2 and {allowed.size} random tokens; got {n}.")
    first = rng.choice(allowed, size=n, replace=False)
    return np.concatenate([first, first])


@dataclass(frozen=True)
class InductionTest:
    """Scores and losses of one run on a twice-repeated random sequence of 2n tokens."""

    ids: np.ndarray  # (2n,)
    induction: np.ndarray  # (layers, heads) mean weight from n + k to k + 1
    previous: np.ndarray  # (layers, heads) mean weight from i to i − 1
    losses: np.ndarray  # (2n − 1,) cross-entropy of predicting token p + 1 at position p, nats
    heads: tuple[Head, ...]  # the heads knocked out for this run (none: clean)

    @property
    def n(self) -> int:
        """Length of one copy."""
        return len(self.ids) // 2

    @property
    def loss_first(self) -> float:
        """Mean loss on the targets of the first copy, tokens 1…n−1 (token 0 has no context)."""
        return float(self.losses[: self.n - 1].mean())

    @property
    def loss_second(self) -> float:
        """Mean loss on the targets of the second copy, tokens n…2n−1. Only the last n − 1 can be
        copied: token n follows the first copy's last token, which has not been seen before."""
        return float(self.losses[self.n - 1 :].mean())

    @property
    def boundary(self) -> float:
        """Where the copies meet when ``losses[p]`` is drawn at its target's position p + 1:
        n − 0.5, between the last target of the first copy (n − 1) and the first of the second."""
        return self.n - 0.5


def induction_test(
    model: Any,
    ids: Sequence[int],
    heads: Iterable[Head] = (),
    mode: str = "zero",
    means: np.ndarray | None = None,
    first: bool = False,
) -> InductionTest:
    """Run ``ids`` (2n,), a sequence repeated twice, with ``heads`` knocked out (none: clean),
    at the first position too with ``first``."""
    ids = np.asarray(ids, dtype=np.int64)
    n = len(ids) // 2
    if n < 2 or len(ids) != 2 * n or not np.array_equal(ids[:n], ids[n:]):
        raise ValueError("The induction test needs a sequence of at least 2 tokens repeated twice.")
    import torch
    from torch.nn import functional as F

    with ablated(model, heads, mode, means, first) as checked:
        logits, attentions = run(model, ids, attentions=True)
    losses = F.cross_entropy(
        torch.from_numpy(logits[:-1]).double(), torch.from_numpy(ids[1:]), reduction="none"
    )
    induction, previous = head_scores(attentions, n)
    return InductionTest(ids, induction, previous, losses.numpy(), checked)


def random_induction_test(model: Any, n: int = 30, seed: int = 0) -> InductionTest:
    """``induction_test`` of the intact ``model`` (a LoadedModel) on ``n`` seeded random tokens
    repeated twice, special tokens (beginning of text and the like) left out."""
    vocab = adapter_of(model.module).shape.vocab
    exclude = model.tokenizer.all_special_ids
    ids = repeated_random_tokens(vocab, n, np.random.default_rng(seed), exclude=exclude)
    return induction_test(model, ids)
