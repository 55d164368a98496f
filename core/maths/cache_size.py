"""What a decoder keeps in memory while it writes: a KV cache that grows with every token, or a
fixed-size state. Shapes from the published configuration (config.json) of each model; every
number stored in 2 bytes (bf16), as these models are usually served.

    cache_bytes(CACHES[1], 8_192)   # Llama 3 8B: 32 layers × 8 KV heads × 128 × (K and V) × 2 B × 8,192
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["BYTES_PER_NUMBER", "CACHES", "CacheShape", "cache_bytes"]

BYTES_PER_NUMBER = 2  # bf16


@dataclass(frozen=True)
class CacheShape:
    """Numbers a model keeps: ``per_token`` for each token in each of ``layers`` layers (only the
    last ``window`` tokens in ``windowed`` of them), plus a fixed ``state`` in each layer."""

    model: str
    kind: str
    source: str  # where the shapes come from
    layers: int
    per_token: int  # numbers per token per layer
    windowed: int = 0  # layers that keep only the last ``window`` tokens
    window: int = 0
    state: int = 0  # numbers per layer that do not grow with the text

    def first_token_bytes(self) -> int:
        """Bytes one more token adds while the text is shorter than every window."""
        return self.layers * self.per_token * BYTES_PER_NUMBER


CACHES = (
    CacheShape(
        "Llama 2 7B", "MHA", "meta-llama/Llama-2-7b-hf config.json: 32 KV heads of 128", 32, 2 * 32 * 128
    ),
    CacheShape(
        "Llama 3 8B", "GQA", "meta-llama/Meta-Llama-3-8B config.json: 8 KV heads of 128", 32, 2 * 8 * 128
    ),
    CacheShape(
        "Falcon 7B", "MQA", "tiiuae/falcon-7b config.json (multi_query): 1 KV head of 64", 32, 2 * 1 * 64
    ),
    CacheShape(
        "DeepSeek-V3",
        "MLA",
        "deepseek-ai/DeepSeek-V3 config.json: kv_lora_rank 512 "
        "+ qk_rope_head_dim 64, cached once for every head",
        61,
        512 + 64,
    ),
    CacheShape(
        "Mistral 7B v0.1",
        "window",
        "mistralai/Mistral-7B-v0.1 config.json: 8 KV heads of 128, a sliding window of 4,096",
        32,
        2 * 8 * 128,
        windowed=32,
        window=4_096,
    ),
    CacheShape(
        "Gemma 3 270M",
        "window",
        "google/gemma-3-270m config.json: 1 KV head of 256; 15 of 18 layers see the last 512 tokens",
        18,
        2 * 256,
        windowed=15,
        window=512,
    ),
    CacheShape(
        "Mamba-2 2.7B",
        "state",
        "state-spaces/mamba2-2.7b config.json (d_model 2,560, 64 layers) with Mamba2's defaults expand 2 and "
        "d_state 128: 5,120 × 128 per layer (the short convolution's few numbers left out)",
        64,
        0,
        state=5_120 * 128,
    ),
)


def cache_bytes(shape: CacheShape, tokens: int) -> int:
    """Bytes held after ``tokens`` tokens: full layers keep every token, windowed layers at most
    ``window``, and every layer its fixed state."""
    full = (shape.layers - shape.windowed) * tokens + shape.windowed * min(tokens, shape.window)
    return (full * shape.per_token + shape.layers * shape.state) * BYTES_PER_NUMBER
