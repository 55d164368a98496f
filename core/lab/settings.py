"""The settings of the training runs (an induction head; associative recall), their allowed
ranges, and the least loss the induction task allows (no torch needed)."""

from __future__ import annotations

import math
from dataclasses import dataclass, fields

import numpy as np


@dataclass(frozen=True)
class Limit:
    """The allowed range of one setting, and what it means."""

    low: float
    high: float
    what: str


LIMITS = {
    "seed": Limit(0, 2**31 - 1, "seed"),
    "steps": Limit(1, 20_000, "training steps"),
    "lr": Limit(1e-5, 1.0, "learning rate"),
    "layers": Limit(1, 2, "layers"),
    "heads": Limit(1, 8, "heads per layer"),
    "width": Limit(8, 256, "width"),
    "vocab": Limit(2, 1024, "vocabulary"),
    "length": Limit(2, 128, "block length (sequences are twice as long)"),
    "batch": Limit(1, 512, "batch"),
    "every": Limit(1, 1000, "steps between checkpoints"),
}


def check_limits(settings, limits: dict[str, Limit]) -> None:
    """ValueError naming the first field of the dataclass ``settings`` outside its limit."""
    for field in fields(settings):
        value, limit = getattr(settings, field.name), limits[field.name]
        whole = field.type == "int"
        number = isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)
        if not (number and limit.low <= value <= limit.high and (not whole or float(value).is_integer())):
            kind, low, high = (
                ("a whole number", f"{limit.low:,}", f"{limit.high:,}")
                if whole
                else ("a number", f"{limit.low:g}", f"{limit.high:g}")
            )
            raise ValueError(f"The {limit.what} must be {kind} from {low} to {high}, got {value!r}.")


@dataclass(frozen=True)
class InductionSettings:
    """One training run on sequences of 2·length tokens (see ``core.lab.data``).

    Measured with the defaults on 2 cores (seeds 0 and 1): the repeated-half loss sits near ln 64
    for about 300 steps, falls off a cliff between steps 300 and 400 while a layer-2 head's
    induction score jumps from 0.1 to about 0.6, and is below 0.5 by step 600.
    """

    seed: int = 0
    steps: int = 800
    lr: float = 1e-3
    layers: int = 2
    heads: int = 4
    width: int = 64
    vocab: int = 64
    length: int = 32
    batch: int = 32
    every: int = 10

    def checked(self) -> InductionSettings:
        """Return self, or raise ValueError naming the first setting out of range and its range."""
        check_limits(self, LIMITS)
        if self.width % self.heads:
            divisors = ", ".join(str(h) for h in range(1, 9) if self.width % h == 0)
            raise ValueError(f"The width {self.width} must split evenly into heads: choose {divisors} heads.")
        return self


MIXERS = ("softmax", "linear", "delta")  # how a recall model's token reads earlier ones
RECALL_LIMITS = {
    "seed": Limit(0, 2**31 - 1, "seed"),
    "pairs": Limit(1, 24, "number of key-value pairs"),
    "steps": Limit(1, 20_000, "training steps"),
    "lr": Limit(1e-5, 1.0, "learning rate"),
    "layers": Limit(1, 4, "layers"),
    "width": Limit(8, 256, "width"),
    "vocab": Limit(8, 1024, "vocabulary"),
    "length": Limit(8, 256, "sequence length"),
    "batch": Limit(1, 512, "batch"),
    "every": Limit(1, 1000, "steps between checkpoints"),
}


@dataclass(frozen=True)
class RecallSettings:
    """Three models trained in turn, one step each, on the same batches.

    Measured with the defaults on 2 cores (seed 0): softmax and delta-rule models answer 99 % of
    the questions by step 200 and all but 0.2 % by step 600; the linear model is at 15 %, a guess
    among the 8 values in view being 12.5 %. About 0.1 s a step for each model.
    """

    seed: int = 0
    pairs: int = 8
    steps: int = 600
    lr: float = 3e-3
    layers: int = 2
    width: int = 64
    vocab: int = 128
    length: int = 64
    batch: int = 64
    every: int = 25

    def checked(self) -> RecallSettings:
        """Return self, or raise ValueError naming the first setting out of range and its range."""
        check_limits(self, RECALL_LIMITS)
        if 2 * self.pairs >= self.length:
            raise ValueError(
                f"{self.pairs} pairs take {2 * self.pairs} tokens; the sequence of {self.length} needs room "
                f"for questions too: at most {(self.length - 1) // 2} pairs."
            )
        if self.pairs > self.vocab // 2:
            raise ValueError(f"{self.pairs} distinct keys need a vocabulary of at least {2 * self.pairs}.")
        return self


def least_losses(length: int, vocab: int) -> np.ndarray:
    """(2·length − 1,) the least loss any model can expect at targets 1…2·length−1 of a block of
    ``length`` random tokens shown twice: ln ``vocab`` while the tokens are new (the repeat's first
    token too, since nothing says the repeat begins), 0 once the block repeats."""
    return np.where(np.arange(1, 2 * length) <= length, math.log(vocab), 0.0)


FORMED = 0.5  # an induction score above this counts as a formed induction head


def first_formed(checkpoints) -> object | None:
    """The first checkpoint (``core.lab.training.Checkpoint``) whose best induction score passes
    FORMED, or None."""
    return next((c for c in checkpoints if c.induction.max() > FORMED), None)
