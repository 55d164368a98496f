"""GPT-2: learned positions, LayerNorm with biases, and Conv1D layers that store (in, out)."""

from core.decoder.families import Family

FAMILY = Family(
    name="GPT-2",
    model_types=("gpt2",),
    blocks="transformer.h",
    attention="attn",
    mlp="mlp",
    out_proj="attn.c_proj",
    final_norm="transformer.ln_f",
    positions="learned",
    conv1d=True,
    pre_norm="ln_1",
    mlp_norm="ln_2",
    mlp_down="mlp.c_proj",
    qkv="c_attn",
)
