"""Gemma 1, 2 and 3 (text): Llama's layout, with scaled embeddings, extra norms around each
block's attention and MLP, and (Gemma 2) the final logits soft-capped, which ``readout`` applies."""

from core.decoder.families import Family

FAMILY = Family(
    name="Gemma",
    model_types=("gemma", "gemma2", "gemma3_text"),
    blocks="model.layers",
    attention="self_attn",
    mlp="mlp",
    out_proj="self_attn.o_proj",
    final_norm="model.norm",
    after_norms=("post_attention_layernorm", "post_feedforward_layernorm"),
    after_norms_in=("gemma2", "gemma3_text"),
    sandwich_mlp_norm="pre_feedforward_layernorm",
)
