"""Multi-query associative recall (Zoology's MQAR) and three tiny models trained on it side by side.

A sequence lists N key-value pairs, k₁ v₁ … k_N v_N (keys from the lower half of the vocabulary,
values from the upper), then asks for keys: every later position holds one of the N keys, and the
model must predict its value as the next token. The three models are the same (learned positions,
``layers`` blocks of a token shift, one mixing head and an MLP) except for how a token mixes in
earlier ones. The shift adds a learned map of the token before (a short convolution, as Mamba-2
and DeltaNet have), so a value's key can travel with it whatever the mixer:

- softmax: causal softmax(q·kᵀ/√d)·v;
- linear: causal linear attention with φ = elu + 1 (the masked parallel form, see core.maths.linear);
- delta: DeltaNet's rule S ← S + β_t(v − S·k)kᵀ on unit-length q and k with β_t = σ(w·x_t),
  trained in its parallel form: U = (I + diag(β)·tril(K·Kᵀ, −1))⁻¹·diag(β)·V, output tril(Q·Kᵀ)·U.

    run = RecallRun(RecallSettings(pairs=8, steps=300))
    for checkpoint in run.train():
        print(checkpoint.step, checkpoint.accuracy)   # {"softmax": …, "linear": …, "delta": …}
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass

import torch
from torch import nn
from torch.nn import functional as F

from core.lab.settings import MIXERS, RecallSettings
from core.lab.training import single_threaded, torch_generator

IGNORE = -100  # targets of positions that ask nothing
EVAL_BATCH = 256


def recall_batch(
    generator: torch.Generator, batch: int, pairs: int, length: int, vocab: int
) -> tuple[torch.Tensor, torch.Tensor]:
    """ids (batch, length) and targets (batch, length): the pairs, then a key at every later
    position, whose target is that key's value (IGNORE elsewhere)."""
    half = vocab // 2
    keys = torch.rand(batch, half, generator=generator).argsort(dim=1)[:, :pairs]  # distinct per row
    values = half + torch.randint(half, (batch, pairs), generator=generator)
    asked = torch.randint(pairs, (batch, length - 2 * pairs), generator=generator)  # which pair
    ids = torch.cat([torch.stack([keys, values], dim=2).reshape(batch, 2 * pairs), keys.gather(1, asked)], 1)
    targets = torch.full((batch, length), IGNORE)
    targets[:, 2 * pairs :] = values.gather(1, asked)
    return ids, targets


def linear_mix(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
    """(B, T, D) each → (B, T, D): causal linear attention, φ = elu + 1, as a masked product."""
    q, k = F.elu(q) + 1, F.elu(k) + 1
    weights = (q @ k.transpose(1, 2)).tril()  # (B, T, T)
    return weights @ v / weights.sum(dim=2, keepdim=True)


def delta_mix(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, beta: torch.Tensor) -> torch.Tensor:
    """(B, T, D) each and beta (B, T) → (B, T, D): the delta rule over the whole sequence at once.
    Row t of U is what pair t writes, β_t·(v_t − S_{t−1}·k_t); the state after t is Σ_{i≤t} u_i·k_iᵀ."""
    q, k = F.normalize(q, dim=2), F.normalize(k, dim=2)
    t = q.shape[1]
    eye = torch.eye(t, dtype=q.dtype)
    system = eye + beta[:, :, None] * (k @ k.transpose(1, 2)).tril(-1)  # (B, T, T), unit lower triangular
    writes = torch.linalg.solve_triangular(system, beta[:, :, None] * v, upper=False, unitriangular=True)
    return (q @ k.transpose(1, 2)).tril() @ writes


class Block(nn.Module):
    """x + mix(shift(LayerNorm(x))), then x + MLP(LayerNorm(x)); one head as wide as the model."""

    def __init__(self, width: int, mixer: str):
        super().__init__()
        self.mixer = mixer
        self.norm1, self.norm2 = nn.LayerNorm(width), nn.LayerNorm(width)
        self.shift = nn.Linear(width, width, bias=False)  # what the token before adds
        nn.init.zeros_(self.shift.weight)
        self.qkv = nn.Linear(width, 3 * width)
        self.beta = nn.Linear(width, 1) if mixer == "delta" else None  # how much each token writes
        self.out = nn.Linear(width, width)
        self.mlp = nn.Sequential(nn.Linear(width, 2 * width), nn.GELU(), nn.Linear(2 * width, width))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = self.norm1(x)
        h = h + self.shift(F.pad(h, (0, 0, 1, 0))[:, :-1])  # (B, T, C): each token gets the one before
        q, k, v = self.qkv(h).chunk(3, dim=2)
        if self.mixer == "softmax":
            mixed = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        elif self.mixer == "linear":
            mixed = linear_mix(q, k, v)
        else:
            mixed = delta_mix(q, k, v, torch.sigmoid(self.beta(h))[:, :, 0])
        x = x + self.out(mixed)
        return x + self.mlp(self.norm2(x))


class RecallModel(nn.Module):
    """ids (B, T) → logits (B, T, V)."""

    def __init__(self, s: RecallSettings, mixer: str):
        super().__init__()
        self.tokens = nn.Embedding(s.vocab, s.width)
        self.positions = nn.Embedding(s.length, s.width)
        self.blocks = nn.ModuleList(Block(s.width, mixer) for _ in range(s.layers))
        self.norm = nn.LayerNorm(s.width)
        self.unembed = nn.Linear(s.width, s.vocab, bias=False)

    def forward(self, ids: torch.Tensor) -> torch.Tensor:
        x = self.tokens(ids) + self.positions(torch.arange(ids.shape[1]))
        for block in self.blocks:
            x = block(x)
        return self.unembed(self.norm(x))


@dataclass(frozen=True)
class RecallCheckpoint:
    """Every model measured after ``step`` steps on the same held-out batch."""

    step: int
    loss: dict[str, float]  # mean loss over the questions
    accuracy: dict[str, float]  # share of questions answered with the right value

    def to_json(self) -> dict:
        return {"step": self.step, "loss": self.loss, "accuracy": self.accuracy}


def answered(logits: torch.Tensor, targets: torch.Tensor) -> tuple[torch.Tensor, float]:
    """Mean loss over the questions, and the share of them answered right."""
    asked = targets != IGNORE
    loss = F.cross_entropy(logits.transpose(1, 2), targets, ignore_index=IGNORE)
    return loss, float((logits.argmax(dim=2)[asked] == targets[asked]).float().mean())


class RecallRun:
    """The three models, their optimisers and their shared data, trained step by step."""

    def __init__(self, settings: RecallSettings):
        self.settings = s = settings.checked()
        self.models = {}
        for k, mixer in enumerate(MIXERS):
            with torch.random.fork_rng(devices=[]):  # each model's own seeded weights, global state untouched
                torch.manual_seed(s.seed * len(MIXERS) + k)
                self.models[mixer] = RecallModel(s, mixer)
        self.optimizers = {
            m: torch.optim.AdamW(model.parameters(), lr=s.lr) for m, model in self.models.items()
        }
        self.data = torch_generator(s.seed)
        self.held_out = recall_batch(torch_generator(s.seed + 1), EVAL_BATCH, s.pairs, s.length, s.vocab)
        self.step = 0

    @torch.no_grad()
    def measure(self) -> RecallCheckpoint:
        loss, accuracy = {}, {}
        for mixer, model in self.models.items():
            model.eval()
            value, accuracy[mixer] = answered(model(self.held_out[0]), self.held_out[1])
            loss[mixer] = float(value)
        return RecallCheckpoint(self.step, loss, accuracy)

    def train(
        self, on_step: Callable[[int, int], None] | None = None, until: int | None = None
    ) -> Iterator[RecallCheckpoint]:
        """Train to step ``until`` (default ``settings.steps``), yielding a checkpoint first, every
        ``every`` steps and at the end; ``on_step(done, until)`` runs after each model's step (stop
        there by raising). A second call continues. Raises ValueError if a loss turns NaN."""
        s = self.settings
        end = s.steps if until is None else until
        with single_threaded():
            if self.step == 0:
                yield self.measure()
            while self.step < end:
                ids, targets = recall_batch(self.data, s.batch, s.pairs, s.length, s.vocab)
                for mixer, model in self.models.items():
                    model.train()
                    loss, _ = answered(model(ids), targets)
                    if not torch.isfinite(loss):
                        raise ValueError(
                            f"The {mixer} model's loss turned {loss.item()} at step {self.step + 1}; "
                            f"lower the learning rate ({s.lr:g}) and train again."
                        )
                    self.optimizers[mixer].zero_grad(set_to_none=True)
                    loss.backward()
                    self.optimizers[mixer].step()
                    if on_step is not None:
                        on_step(self.step, end)
                self.step += 1
                if self.step % s.every == 0 or self.step == end:
                    yield self.measure()
