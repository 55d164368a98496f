"""GPT-NeoX (Pythia): rotary on part of each head, attention and MLP side by side on one input."""

from core.decoder.families import Family

FAMILY = Family(
    name="GPT-NeoX",
    model_types=("gpt_neox",),
    blocks="gpt_neox.layers",
    attention="attention",
    mlp="mlp",
    out_proj="attention.dense",
    final_norm="gpt_neox.final_layer_norm",
    qkv="query_key_value",
    mlp_down="mlp.dense_4h_to_h",
    qkv_by_head=True,
)
