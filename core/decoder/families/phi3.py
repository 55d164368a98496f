"""Phi-3: Llama's layout with the query, key and value projections fused into one."""

from core.decoder.families import Family

FAMILY = Family(
    name="Phi-3",
    model_types=("phi3",),
    blocks="model.layers",
    attention="self_attn",
    mlp="mlp",
    out_proj="self_attn.o_proj",
    final_norm="model.norm",
    qkv="qkv_proj",
)
