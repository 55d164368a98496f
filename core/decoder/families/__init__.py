"""The decoder families Attention Lab can read, one module each, chosen by ``model_type``.

    family_of("qwen2").name          # "Llama"
    family_of("bert")                # ValueError naming the supported families

A family names where its models keep the parts every view needs (attribute paths from the
``…ForCausalLM`` module); adding one is a module here with a ``FAMILY`` and a tiny-model test.
Data only: importing this never imports torch.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Family:
    """Where one family's causal language models keep their parts (dotted attribute paths)."""

    name: str  # as shown: "Llama", "GPT-2"
    model_types: tuple[str, ...]  # the configurations' ``model_type`` values it reads
    blocks: str  # the list of transformer blocks, from the whole model
    attention: str  # a block's attention module, from the block
    mlp: str  # a block's MLP, from the block
    out_proj: str  # a block's attention output projection, from the block
    final_norm: str  # the norm before the unembedding, from the whole model
    pre_norm: str = "input_layernorm"  # the norm attention reads through, from the block
    mlp_down: str = "mlp.down_proj"  # the MLP's last projection, from the block: it reads the neurons
    mlp_norm: str = "post_attention_layernorm"  # the norm the MLP reads through, from the block
    qkv: str | None = None  # one fused query-key-value projection, from the attention (None: three)
    projections: tuple[str, str, str] = ("q_proj", "k_proj", "v_proj")  # the three, from the attention
    head_norms: tuple[str, str] = ("q_norm", "k_norm")  # on each head's query and key, where a model has them
    qkv_by_head: bool = False  # the fused rows go [q k v of head 0 | head 1 …], not [all q | all k | all v]
    after_norms: tuple[str, str] | None = None  # norms on attention's and the MLP's outputs, from the block
    after_norms_in: tuple[str, ...] = ()  # the model types that have ``after_norms``
    sandwich_mlp_norm: str = ""  # the norm the MLP reads through in those model types
    positions: str = "rotary"  # "rotary" or "learned" (a table added to the token embeddings)
    conv1d: bool = False  # GPT-2's Conv1D layers keep their weights as (in, out)


def _families() -> tuple[Family, ...]:
    from core.decoder.families import gemma, gpt2, gpt_neox, llama, phi3

    return tuple(m.FAMILY for m in (llama, gemma, phi3, gpt2, gpt_neox))


FAMILIES = _families()
BY_TYPE = {t: f for f in FAMILIES for t in f.model_types}


def family_of(model_type: str | None) -> Family:
    """The family that reads ``model_type``; ValueError naming the supported ones otherwise."""
    family = BY_TYPE.get(model_type or "")
    if family is None:
        raise ValueError(
            f"{model_type or 'This model'} is not a decoder family Attention Lab reads. {supported()}"
        )
    return family


def supported() -> str:
    """One sentence naming every supported family and its model types."""
    names = "; ".join(f"{f.name} ({', '.join(f.model_types)})" for f in FAMILIES)
    return f"Supported decoders: {names}."
