"""Tiny random models saved to a folder, for tests that must not download anything."""

from __future__ import annotations

from contextlib import contextmanager
from pathlib import Path

CORPUS = [
    "the cat sat on the mat because it was warm",
    "the trophy did not fit in the suitcase because it was too big",
    "a dog ran after the ball and caught it",
]
END = "<|endoftext|>"
LLAMA_PROMPT = "the cat sat on the mat because the cat"  # 14 pieces; " because" is one


def _byte_bpe(n_positions: int, tokenizer_class):
    """A byte-level BPE tokenizer trained on ``CORPUS`` (300 pieces), wrapped as a fast tokenizer."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers

    bpe = Tokenizer(models.BPE())
    bpe.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    bpe.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=300,
        show_progress=False,
        special_tokens=[END],
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
    )
    bpe.train_from_iterator(CORPUS, trainer)
    tokenizer = tokenizer_class(tokenizer_object=bpe, eos_token=END)
    tokenizer.model_max_length = n_positions
    return tokenizer, bpe.get_vocab_size()


def save_tiny_gpt2(folder: Path, n_layer: int = 2, n_head: int = 3, n_positions: int = 64) -> Path:
    """A random GPT-2 (decoder, causal) with a byte-level BPE tokenizer trained on ``CORPUS``."""
    import torch
    from transformers import GPT2Config, GPT2LMHeadModel, GPT2TokenizerFast

    tokenizer, vocab = _byte_bpe(n_positions, GPT2TokenizerFast)
    torch.manual_seed(0)
    config = GPT2Config(
        vocab_size=vocab,
        n_positions=n_positions,
        n_embd=24,
        n_layer=n_layer,
        n_head=n_head,
        bos_token_id=0,
        eos_token_id=0,
    )
    GPT2LMHeadModel(config).save_pretrained(folder, safe_serialization=True)
    tokenizer.save_pretrained(folder)
    return folder


def save_tiny_llama(
    folder: Path, n_layer: int = 2, n_head: int = 4, n_kv_head: int = 2, n_positions: int = 64
) -> Path:
    """A random Llama with grouped-query attention (``n_head`` query heads share ``n_kv_head``
    key/value heads), RoPE and a byte-level BPE tokenizer trained on ``CORPUS``."""
    import torch
    from transformers import LlamaForCausalLM, PreTrainedTokenizerFast

    tokenizer, vocab = _byte_bpe(n_positions, PreTrainedTokenizerFast)
    torch.manual_seed(0)
    config = _llama_config(vocab, n_layer, n_head, n_kv_head, n_positions, tie_word_embeddings=True)
    model = LlamaForCausalLM(config)
    with torch.no_grad():  # sharper logits than the 0.02 init, so sampling tests see a real spread
        model.lm_head.weight.mul_(20)
    model.save_pretrained(folder, safe_serialization=True)
    tokenizer.save_pretrained(folder)
    return folder


def tiny_llama(seed: int = 0, n_layer: int = 2, n_head: int = 4, n_kv_head: int = 2):
    """(model, tokenizer): a random Llama in memory with grouped-query attention (hidden 32,
    head size 8), eager attention, eval mode, and the BPE tokenizer above.

    Weights are drawn wider than the usual 0.02 so that heads differ visibly.
    """
    import torch
    from transformers import LlamaForCausalLM, PreTrainedTokenizerFast

    tokenizer, vocab = _byte_bpe(64, PreTrainedTokenizerFast)
    torch.manual_seed(seed)
    config = _llama_config(vocab, n_layer, n_head, n_kv_head, 64, initializer_range=0.3, pad_token_id=0)
    model = LlamaForCausalLM._from_config(config, attn_implementation="eager")
    return model.eval(), tokenizer


def _llama_config(vocab: int, n_layer: int, n_head: int, n_kv_head: int, n_positions: int, **more):
    """A small LlamaConfig: hidden 32, head size 32 / n_head, MLP 64."""
    from transformers import LlamaConfig

    return LlamaConfig(
        vocab_size=vocab,
        hidden_size=32,
        intermediate_size=64,
        num_hidden_layers=n_layer,
        num_attention_heads=n_head,
        num_key_value_heads=n_kv_head,
        max_position_embeddings=n_positions,
        bos_token_id=0,
        eos_token_id=0,
        **more,
    )


@contextmanager
def head_zeroed_by_hand(module, layer: int, head: int, positions):
    """While inside: ``head``'s slice of ``layer``'s o_proj input is 0 at ``positions``, by a hook
    written here (the reference the ablation code is checked against)."""
    d = (
        getattr(module.config, "head_dim", None)
        or module.config.hidden_size // module.config.num_attention_heads
    )

    def hook(_, args):
        x = args[0].clone()
        x[:, positions, head * d : (head + 1) * d] = 0
        return (x, *args[1:])

    projection = OUT_PROJECTIONS[module.config.model_type](module, layer)
    handle = projection.register_forward_pre_hook(hook)
    try:
        yield
    finally:
        handle.remove()


def _family_config(model_type: str, vocab: int, n_positions: int):
    """A tiny configuration of ``model_type``: 2 layers, 4 query heads of size 8 (GPT-2: 3 of 8),
    grouped-query attention where the family has it, every family's own quirks left on."""
    import transformers

    common = dict(vocab_size=vocab, bos_token_id=0, eos_token_id=0, pad_token_id=0)
    sized = dict(hidden_size=32, intermediate_size=64, num_hidden_layers=2, num_attention_heads=4)
    sized |= dict(max_position_embeddings=n_positions, **common)
    if model_type == "gpt2":
        return transformers.GPT2Config(n_embd=24, n_layer=2, n_head=3, n_positions=n_positions, **common)
    if model_type == "gpt_neox":  # rotary on a quarter of each head, parallel attention and MLP
        return transformers.GPTNeoXConfig(rotary_pct=0.25, use_parallel_residual=True, **sized)
    kinds = {
        "llama": transformers.LlamaConfig,
        "qwen3": transformers.Qwen3Config,  # a norm on each head's queries and keys
        "gemma2": transformers.Gemma2Config,  # soft-capped scores and logits, norms around blocks
        "gemma3_text": transformers.Gemma3TextConfig,
        "phi3": transformers.Phi3Config,  # fused query, key and value projection
    }
    extra = {"head_dim": 8} if model_type in ("qwen3", "gemma2", "gemma3_text") else {}
    if model_type in ("gemma2", "gemma3_text"):  # a window shorter than the tests' prompts, then a full layer
        extra |= {"sliding_window": 4, "layer_types": ["sliding_attention", "full_attention"]}
    return kinds[model_type](num_key_value_heads=2, **extra, **sized)


FAMILY_TYPES = ("llama", "qwen3", "gemma2", "gemma3_text", "phi3", "gpt2", "gpt_neox")


def save_tiny_decoder(folder: Path, model_type: str, n_positions: int = 64) -> Path:
    """A random causal language model of ``model_type`` (one of ``FAMILY_TYPES``) with the BPE
    tokenizer above, saved as safetensors; weights drawn wider than usual so heads differ."""
    import torch
    from transformers import AutoModelForCausalLM, PreTrainedTokenizerFast

    tokenizer, vocab = _byte_bpe(n_positions, PreTrainedTokenizerFast)
    torch.manual_seed(0)
    config = _family_config(model_type, vocab, n_positions)
    config.initializer_range = 0.2
    model = AutoModelForCausalLM.from_config(config)
    with torch.no_grad():  # norms' gains away from their initial ones, so a norm applied twice shows
        for name, weight in model.named_parameters():
            if weight.ndim == 1 and ("norm" in name or ".ln_" in name) and name.endswith("weight"):
                weight.add_(0.3 * torch.randn_like(weight))
    model.save_pretrained(folder, safe_serialization=True)
    tokenizer.save_pretrained(folder)
    return folder


LONG_TEXT = " ".join(["the cat sat on the mat because it was warm"] * 45)  # 676 tokens, <bos> first


def save_long_gemma(folder: Path) -> Path:
    """A tiny Gemma 3 reading up to 1,024 tokens (its first layer's window: 4), its tokenizer putting
    the vocabulary's one special token (id 0) first, as Gemma's puts <bos>."""
    from tokenizers.processors import TemplateProcessing
    from transformers import AutoTokenizer

    save_tiny_decoder(folder, "gemma3_text", n_positions=1024)
    tokenizer = AutoTokenizer.from_pretrained(folder)
    tokenizer._tokenizer.post_processor = TemplateProcessing(single=f"{END} $A", special_tokens=[(END, 0)])
    tokenizer.save_pretrained(folder)
    return folder


OUT_PROJECTIONS = {  # written by hand, not read from the adapters: each family's own module names
    "llama": lambda m, layer: m.model.layers[layer].self_attn.o_proj,
    "qwen3": lambda m, layer: m.model.layers[layer].self_attn.o_proj,
    "gemma2": lambda m, layer: m.model.layers[layer].self_attn.o_proj,
    "gemma3_text": lambda m, layer: m.model.layers[layer].self_attn.o_proj,
    "phi3": lambda m, layer: m.model.layers[layer].self_attn.o_proj,
    "gpt2": lambda m, layer: m.transformer.h[layer].attn.c_proj,
    "gpt_neox": lambda m, layer: m.gpt_neox.layers[layer].attention.dense,
}

# Each family's own module paths, written by hand, not read from the adapters: (the blocks from the
# model, a block's attention and MLP, the final norm from the model).
# Gemma 2 and 3 normalise attention's and the MLP's outputs again before adding them to the stream.
AFTER_NORMS = {
    t: ("post_attention_layernorm", "post_feedforward_layernorm") for t in ("gemma2", "gemma3_text")
}
# The norm the MLP reads the stream through (None: it reads the block's input, GPT-NeoX's parallel
# residual), and the MLP's last projection, which reads its neurons.
MLP_READS = {
    "llama": ("post_attention_layernorm", "mlp.down_proj"),
    "qwen3": ("post_attention_layernorm", "mlp.down_proj"),
    "gemma2": ("pre_feedforward_layernorm", "mlp.down_proj"),
    "gemma3_text": ("pre_feedforward_layernorm", "mlp.down_proj"),
    "phi3": ("post_attention_layernorm", "mlp.down_proj"),
    "gpt2": ("ln_2", "mlp.c_proj"),
    "gpt_neox": (None, "mlp.dense_4h_to_h"),
}
PARTS = {
    "llama": ("model.layers", "self_attn", "mlp", "model.norm"),
    "qwen3": ("model.layers", "self_attn", "mlp", "model.norm"),
    "gemma2": ("model.layers", "self_attn", "mlp", "model.norm"),
    "gemma3_text": ("model.layers", "self_attn", "mlp", "model.norm"),
    "phi3": ("model.layers", "self_attn", "mlp", "model.norm"),
    "gpt2": ("transformer.h", "attn", "mlp", "transformer.ln_f"),
    "gpt_neox": ("gpt_neox.layers", "attention", "mlp", "gpt_neox.final_layer_norm"),
}
