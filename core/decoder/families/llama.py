"""Llama and the decoders laid out like it: Mistral, Qwen2, Qwen3, SmolLM."""

from core.decoder.families import Family

FAMILY = Family(
    name="Llama",
    model_types=("llama", "mistral", "qwen2", "qwen3", "smollm3"),
    blocks="model.layers",
    attention="self_attn",
    mlp="mlp",
    out_proj="self_attn.o_proj",
    final_norm="model.norm",
)
