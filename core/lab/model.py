"""A tiny attention-only transformer, written out so every head's weights can be read.

nanoGPT-style, without MLPs: token embedding + learned positions → ``layers`` blocks, each a
residual causal self-attention with a pre-LayerNorm → final LayerNorm → unembedding to logits.
Attention is computed by hand (no fused kernel), so each forward pass also returns the weights.

Shapes: B sequences of T tokens, width C = ``width``, H heads of size D = C / H, V = vocabulary.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch
from torch import nn
from torch.nn import functional as F


@dataclass(frozen=True)
class ModelShape:
    """Everything that fixes the parameter shapes of an ``AttentionOnlyTransformer``."""

    layers: int
    heads: int
    width: int
    vocab: int
    context: int  # longest sequence the learned position table covers


class CausalSelfAttention(nn.Module):
    """Multi-head causal self-attention that also returns its weights."""

    def __init__(self, width: int, heads: int, context: int):
        super().__init__()
        self.heads = heads
        self.qkv = nn.Linear(width, 3 * width)  # queries, keys and values of all heads at once
        self.out = nn.Linear(width, width)  # W_O: heads joined back into the residual stream
        causal = torch.tril(torch.ones(context, context, dtype=torch.bool))
        self.register_buffer("causal", causal, persistent=False)  # (context, context)

    def forward(self, x: torch.Tensor, head_mask: torch.Tensor | None = None):
        """x (B, T, C), head_mask (H,) of 0/1 or None → output (B, T, C), weights (B, H, T, T)."""
        b, t, c = x.shape
        q, k, v = self.qkv(x).split(c, dim=-1)  # each (B, T, C)
        q, k, v = (
            z.view(b, t, self.heads, c // self.heads).transpose(1, 2) for z in (q, k, v)
        )  # (B, H, T, D)
        scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])  # (B, H, T, T)
        scores = scores.masked_fill(~self.causal[:t, :t], float("-inf"))
        weights = F.softmax(scores, dim=-1)  # (B, H, T, T); row i looks at columns ≤ i
        heads = weights @ v  # (B, H, T, D)
        if head_mask is not None:
            heads = heads * head_mask.view(1, -1, 1, 1)  # a knocked-out head writes nothing
        joined = heads.transpose(1, 2).reshape(b, t, c)  # (B, T, C)
        return self.out(joined), weights


class AttentionBlock(nn.Module):
    """One layer: x + attention(LayerNorm(x)). No MLP, so the model can only move information."""

    def __init__(self, width: int, heads: int, context: int):
        super().__init__()
        self.norm = nn.LayerNorm(width)
        self.attention = CausalSelfAttention(width, heads, context)

    def forward(self, x: torch.Tensor, head_mask: torch.Tensor | None = None):
        """x (B, T, C) → x (B, T, C), weights (B, H, T, T)."""
        update, weights = self.attention(self.norm(x), head_mask)
        return x + update, weights


class AttentionOnlyTransformer(nn.Module):
    """Token ids (B, T) → next-token logits (B, T, V) and every head's weights (B, L, H, T, T)."""

    def __init__(self, shape: ModelShape):
        super().__init__()
        if shape.width % shape.heads:
            raise ValueError(
                f"The width {shape.width} must be a multiple of the number of heads {shape.heads}."
            )
        self.shape = shape
        self.tokens = nn.Embedding(shape.vocab, shape.width)
        self.positions = nn.Embedding(shape.context, shape.width)  # learned, one row per position
        self.blocks = nn.ModuleList(
            AttentionBlock(shape.width, shape.heads, shape.context) for _ in range(shape.layers)
        )
        self.norm = nn.LayerNorm(shape.width)
        self.unembed = nn.Linear(shape.width, shape.vocab, bias=False)
        for module in self.modules():  # GPT-2's initialisation
            if isinstance(module, nn.Linear | nn.Embedding):
                nn.init.normal_(module.weight, std=0.02)
            if isinstance(module, nn.Linear) and module.bias is not None:
                nn.init.zeros_(module.bias)

    def forward(self, ids: torch.Tensor, head_mask: torch.Tensor | None = None):
        """ids (B, T) int64, head_mask (L, H) of 0/1 or None → logits (B, T, V), weights (B, L, H, T, T)."""
        t = ids.shape[1]
        x = self.tokens(ids) + self.positions(torch.arange(t, device=ids.device))  # (B, T, C)
        maps = []
        for layer, block in enumerate(self.blocks):
            x, weights = block(x, None if head_mask is None else head_mask[layer])
            maps.append(weights)
        return self.unembed(self.norm(x)), torch.stack(maps, dim=1)
