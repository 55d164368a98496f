"""Tiny random models saved to a folder, for tests that must not download anything."""

from __future__ import annotations

from pathlib import Path

CORPUS = [
    "the cat sat on the mat because it was warm",
    "the trophy did not fit in the suitcase because it was too big",
    "a dog ran after the ball and caught it",
]
END = "<|endoftext|>"


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
    from transformers import LlamaConfig, LlamaForCausalLM, PreTrainedTokenizerFast

    tokenizer, vocab = _byte_bpe(n_positions, PreTrainedTokenizerFast)
    torch.manual_seed(0)
    config = LlamaConfig(
        vocab_size=vocab,
        hidden_size=32,
        intermediate_size=64,
        num_hidden_layers=n_layer,
        num_attention_heads=n_head,
        num_key_value_heads=n_kv_head,
        max_position_embeddings=n_positions,
        bos_token_id=0,
        eos_token_id=0,
        tie_word_embeddings=True,
    )
    model = LlamaForCausalLM(config)
    with torch.no_grad():  # sharper logits than the 0.02 init, so sampling tests see a real spread
        model.lm_head.weight.mul_(20)
    model.save_pretrained(folder, safe_serialization=True)
    tokenizer.save_pretrained(folder)
    return folder
