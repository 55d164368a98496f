"""Tiny random models saved to a folder, for tests that must not download anything."""

from __future__ import annotations

from pathlib import Path

CORPUS = [
    "the cat sat on the mat because it was warm",
    "the trophy did not fit in the suitcase because it was too big",
    "a dog ran after the ball and caught it",
]
LLAMA_PROMPT = "the cat sat on the mat because the cat"  # 14 pieces; " because" is one


def bpe_tokenizer(n_positions: int = 64):
    """A byte-level BPE tokenizer (300 pieces) trained on ``CORPUS``, as a fast GPT-2 tokenizer."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import GPT2TokenizerFast

    bpe = Tokenizer(models.BPE())
    bpe.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    bpe.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=300,
        show_progress=False,
        special_tokens=["<|endoftext|>"],
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
    )
    bpe.train_from_iterator(CORPUS, trainer)
    tokenizer = GPT2TokenizerFast(tokenizer_object=bpe, eos_token="<|endoftext|>")
    tokenizer.model_max_length = n_positions
    return tokenizer


def save_tiny_gpt2(folder: Path, n_layer: int = 2, n_head: int = 3, n_positions: int = 64) -> Path:
    """A random GPT-2 (decoder, causal) with a byte-level BPE tokenizer trained on ``CORPUS``."""
    import torch
    from transformers import GPT2Config, GPT2LMHeadModel

    tokenizer = bpe_tokenizer(n_positions)
    torch.manual_seed(0)
    config = GPT2Config(
        vocab_size=len(tokenizer),
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


def tiny_llama(seed: int = 0, n_layers: int = 2, n_heads: int = 4, n_kv_heads: int = 2):
    """(model, tokenizer): a random Llama in memory with grouped-query attention (hidden 32,
    head size 8), eager attention, eval mode, and the BPE tokenizer above.

    Weights are drawn wider than the usual 0.02 so that heads differ visibly.
    """
    import torch
    from transformers import LlamaConfig, LlamaForCausalLM

    tokenizer = bpe_tokenizer()
    torch.manual_seed(seed)
    config = LlamaConfig(
        vocab_size=len(tokenizer),
        hidden_size=32,
        intermediate_size=64,
        num_hidden_layers=n_layers,
        num_attention_heads=n_heads,
        num_key_value_heads=n_kv_heads,
        max_position_embeddings=64,
        initializer_range=0.3,
        bos_token_id=0,
        eos_token_id=0,
        pad_token_id=0,
    )
    model = LlamaForCausalLM._from_config(config, attn_implementation="eager")
    return model.eval(), tokenizer
