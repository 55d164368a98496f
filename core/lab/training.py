"""Training an attention-only transformer on repeated random sequences, one checkpoint at a time.

    run = InductionRun(InductionSettings(seed=0))
    for checkpoint in run.train():        # step 0, every ``every`` steps, and the last step
        print(checkpoint.step, checkpoint.loss_second, checkpoint.induction.max())

A checkpoint measures the model on a fixed evaluation batch: the loss on the first half (random,
≈ ln V at best) and on the repeated half, and for every head its induction score (mean weight a
token in the second half puts on the token just after its earlier copy) and its previous-token
score (mean weight on the token just before). The evaluation batch's first sequence is the probe
whose attention maps are kept. Everything is deterministic for a given seed.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass

import numpy as np
import torch
import torch._dynamo  # what the first optimiser would import (800 modules), imported here with the rest
from torch.nn import functional as F

from core.lab.data import parse_sequence, repeated_sequences
from core.lab.model import AttentionOnlyTransformer, ModelShape
from core.lab.settings import InductionSettings
from core.maths.head_analysis import head_scores

EVAL_BATCH = 32  # sequences every checkpoint is measured on; the first is the probe


@dataclass(frozen=True)
class Checkpoint:
    """The model measured after ``step`` training steps (L layers, H heads, T = 2·length)."""

    step: int
    loss_first: float  # mean next-token loss on targets in the first half (random tokens)
    loss_second: float  # … on targets in the repeated half
    induction: np.ndarray  # (L, H) induction score of every head
    previous: np.ndarray  # (L, H) previous-token score of every head
    probe: np.ndarray  # (L, H, T, T) float32 attention maps of the probe sequence

    def to_json(self) -> dict:
        """step, both losses and both scores as plain lists (layer → head), rounded to 6 digits."""
        return {
            "step": self.step,
            "loss_first": round(self.loss_first, 6),
            "loss_second": round(self.loss_second, 6),
            "induction": self.induction.round(6).tolist(),
            "previous": self.previous.round(6).tolist(),
        }


@dataclass(frozen=True)
class Reading:
    """The model run on one typed sequence of T tokens."""

    tokens: tuple[int, ...]  # (T,)
    weights: np.ndarray  # (L, H, T, T) float32
    predicted: np.ndarray  # (T,) the most likely next token after each position
    confidence: np.ndarray  # (T,) its probability


def half_losses(logits: torch.Tensor, ids: torch.Tensor, length: int) -> tuple[torch.Tensor, torch.Tensor]:
    """logits (B, 2L, V), ids (B, 2L) → mean loss on targets 1…L−1 and on targets L…2L−1."""
    per_token = F.cross_entropy(logits[:, :-1].transpose(1, 2), ids[:, 1:], reduction="none")  # (B, 2L−1)
    return per_token[:, : length - 1].mean(), per_token[:, length - 1 :].mean()


def torch_generator(seed: int) -> torch.Generator:
    """A CPU random generator of its own, so a run never touches torch's global one."""
    return torch.Generator().manual_seed(seed)


class InductionRun:
    """A model, its optimiser and its data, trained step by step (see the module docstring)."""

    def __init__(self, settings: InductionSettings):
        self.settings = s = settings.checked()
        self.shape = ModelShape(s.layers, s.heads, s.width, s.vocab, context=2 * s.length)
        with torch.random.fork_rng(devices=[]):  # the seed fixes the weights without touching global state
            torch.manual_seed(s.seed)
            self.model = AttentionOnlyTransformer(self.shape)
        self.data = torch_generator(s.seed)
        self.eval_ids = repeated_sequences(self.data, EVAL_BATCH, s.length, s.vocab)  # (EVAL_BATCH, 2L)
        self.optimizer = torch.optim.AdamW(self.model.parameters(), lr=s.lr)
        self.step = 0

    @torch.no_grad()
    def measure(self, head_mask: np.ndarray | None = None) -> Checkpoint:
        """The checkpoint for the model as it is now; ``head_mask`` (L, H) of 0/1 knocks heads out."""
        mask = None if head_mask is None else torch.as_tensor(head_mask, dtype=torch.float32)
        self.model.eval()
        logits, weights = self.model(self.eval_ids, mask)  # (B, 2L, V), (B, L, H, 2L, 2L)
        first, second = half_losses(logits, self.eval_ids, self.settings.length)
        mean_weights = weights.mean(dim=0).numpy()  # (L, H, 2L, 2L)
        induction, previous = head_scores(mean_weights, self.settings.length)
        return Checkpoint(
            self.step, float(first), float(second), induction, previous, weights[0].numpy().copy()
        )

    def train(
        self, on_step: Callable[[int, int], None] | None = None, until: int | None = None
    ) -> Iterator[Checkpoint]:
        """Train up to step ``until`` (default ``settings.steps``), yielding a checkpoint at the
        start, every ``every`` steps and at the end. ``on_step(done, until)`` runs after every step
        and also between the forward and backward pass of each, so a caller that stops the run
        there (by raising) waits at most about half a step.
        A second call continues where the first stopped. Raises ValueError if the loss turns NaN.
        Torch runs on one thread meanwhile (see ``single_threaded``).
        """
        with single_threaded():
            yield from self._train(on_step, self.settings.steps if until is None else until)

    def _train(self, on_step: Callable[[int, int], None] | None, end: int) -> Iterator[Checkpoint]:
        s = self.settings
        if self.step == 0:
            yield self.measure()
        while self.step < end:
            self.model.train()
            ids = repeated_sequences(self.data, s.batch, s.length, s.vocab, varied=True)  # (B, 2L)
            logits, _ = self.model(ids)  # (B, 2L, V)
            loss = F.cross_entropy(logits[:, :-1].transpose(1, 2), ids[:, 1:])  # mean over every target
            if on_step is not None:
                on_step(self.step, end)
            if not torch.isfinite(loss):
                raise ValueError(
                    f"The loss turned {loss.item()} at step {self.step + 1} with learning rate {s.lr:g}; "
                    "lower the learning rate and train again."
                )
            self.optimizer.zero_grad(set_to_none=True)
            loss.backward()
            self.optimizer.step()
            self.step += 1
            if on_step is not None:
                on_step(self.step, end)
            if self.step % s.every == 0 or self.step == end:
                yield self.measure()

    def knockouts(self, progress: Callable[[int, int], None] | None = None) -> np.ndarray:
        """(L, H) repeated-half loss with each head knocked out in turn (the others kept);
        ``progress(done, total)`` after each head."""
        losses = np.zeros((self.shape.layers, self.shape.heads))
        for done, (layer, head) in enumerate(np.ndindex(losses.shape), 1):
            mask = np.ones_like(losses)
            mask[layer, head] = 0.0
            losses[layer, head] = self.measure(mask).loss_second
            if progress is not None:
                progress(done, losses.size)
        return losses

    @torch.no_grad()
    def read(self, text: str, head_mask: np.ndarray | None = None) -> Reading:
        """Run the model on typed token numbers ('5 9 2 5 9 2'); refuses tokens outside the vocabulary."""
        tokens = parse_sequence(text, self.shape.vocab, self.shape.context)
        mask = None if head_mask is None else torch.as_tensor(head_mask, dtype=torch.float32)
        self.model.eval()
        logits, weights = self.model(torch.tensor([tokens]), mask)  # (1, T, V), (1, L, H, T, T)
        probs = logits[0].softmax(dim=-1)  # (T, V)
        confidence, predicted = probs.max(dim=-1)
        return Reading(tuple(tokens), weights[0].numpy().copy(), predicted.numpy(), confidence.numpy())


@contextmanager
def single_threaded():
    """Run torch on one thread inside the block: this model's matrices are so small that a second
    thread only fights the rest of the program for the cores (on 2 cores: 46 against 750 ms a step)."""
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        yield
    finally:
        torch.set_num_threads(before)
