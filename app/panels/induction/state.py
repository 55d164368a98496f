"""Panel "Grow an induction head": its Qt-free states and what they compute.

Torch is imported only when a computation needs it, so this module loads without it.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np

from core.lab.settings import InductionSettings, least_losses
from core.models.heavy_load import quiet_import

# A block of 16 tokens shown twice: the shortest block training uses. Shorter repeats are read
# right but with little confidence, since the model never saw one.
EXAMPLE_TEXT = " ".join(["12 40 7 33 21 5 58 3 9 14 1 27 50 61 44 18"] * 2)


def check_settings(settings: InductionSettings) -> InductionSettings:
    """The training settings, or ValueError saying which one is out of range."""
    return settings.checked()


def one_layer(settings: InductionSettings) -> InductionSettings:
    """Step 3's run: step 2's settings with a single layer."""
    return replace(settings, layers=1)


@dataclass(frozen=True)
class TaskState:
    seed: int = 0
    length: int = 8  # block length: the sequence is twice as long
    vocab: int = 64


@dataclass(frozen=True)
class TaskResult:
    tokens: np.ndarray  # (2·length,) one example sequence
    best_loss: np.ndarray  # (2·length − 1,) the least loss any model can expect at each target
    vocab: int


def compute_task(s: TaskState, progress=None) -> TaskResult:
    """One example of the task and, for each target token 1…2L−1, the best loss a model can
    expect: ln V while the tokens are new, 0 once the block repeats. Drawn by the training data's
    own generator, so it runs in the worker: the first call imports torch."""
    InductionSettings(seed=s.seed, length=s.length, vocab=s.vocab).checked()
    try:
        quiet_import("core.lab.training")  # torch, without stalling the UI thread
        from core.lab.data import repeated_sequences
        from core.lab.training import torch_generator

        tokens = repeated_sequences(torch_generator(s.seed), 1, s.length, s.vocab)[0].numpy()
    except (
        ImportError
    ):  # a lite install: the same kind of example, drawn by NumPy; training says what to install
        tokens = np.tile(np.random.default_rng(s.seed).integers(s.vocab, size=s.length), 2)
    return TaskResult(tokens, least_losses(s.length, s.vocab), s.vocab)


@dataclass(frozen=True)
class KnockoutState:
    run: object | None = None  # the trained InductionRun; compared by identity
    step: int = 0  # the run's step when it was handed over: a new step means new numbers
    layer: int = 2  # the head to knock out, counted from 1
    head: int = 1
    text: str = EXAMPLE_TEXT


@dataclass(frozen=True)
class KnockoutResult:
    intact: float  # repeat-half loss with every head
    losses: np.ndarray  # (L, H) repeat-half loss with each head knocked out in turn
    reading: object  # core.lab.training.Reading of the typed text, every head working
    knocked: object  # … with the chosen head knocked out


def compute_knockout(s: KnockoutState, progress=None) -> KnockoutResult | None:
    """Every head's knock-out loss and the typed sequence read with and without the chosen head;
    None before a model has been trained. ``progress(done, total)`` runs after each head."""
    if s.run is None:
        return None
    layers, heads = s.run.shape.layers, s.run.shape.heads
    if not (1 <= s.layer <= layers and 1 <= s.head <= heads):
        raise ValueError(f"This model has layers 1…{layers} and heads 1…{heads}; choose a head among them.")
    mask = np.ones((layers, heads))
    mask[s.layer - 1, s.head - 1] = 0.0
    reading = s.run.read(s.text)
    losses = s.run.knockouts(progress)
    return KnockoutResult(s.run.measure().loss_second, losses, reading, s.run.read(s.text, mask))
