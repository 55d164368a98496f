"""Tiny random models saved to a folder, for tests that must not download anything."""

from __future__ import annotations

from pathlib import Path

CORPUS = [
    "the cat sat on the mat because it was warm",
    "the trophy did not fit in the suitcase because it was too big",
    "a dog ran after the ball and caught it",
]


def save_tiny_gpt2(folder: Path, n_layer: int = 2, n_head: int = 3, n_positions: int = 64) -> Path:
    """A random GPT-2 (decoder, causal) with a byte-level BPE tokenizer trained on ``CORPUS``."""
    import torch
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import GPT2Config, GPT2LMHeadModel, GPT2TokenizerFast

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
    torch.manual_seed(0)
    config = GPT2Config(
        vocab_size=bpe.get_vocab_size(),
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
