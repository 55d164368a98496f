"""Fixtures shared by the core tests: a tiny random Llama (built only by tests that ask for it)."""

import pytest

from tests.tiny_models import LLAMA_PROMPT, tiny_llama


@pytest.fixture(scope="session")
def llama():
    """(model, tokenizer): 2 layers, 4 query heads sharing 2 key/value heads, hidden 32."""
    return tiny_llama()


@pytest.fixture(scope="session")
def ids(llama):
    """Token ids of ``LLAMA_PROMPT`` (14 pieces)."""
    return llama[1](LLAMA_PROMPT)["input_ids"]


@pytest.fixture(scope="session")
def loaded(llama):
    """The same tiny Llama as a LoadedModel decoder, as ``core.models.load_model`` gives one."""
    from core.models.kinds import DECODER, LoadedModel

    module, tokenizer = llama
    config = module.config
    return LoadedModel(
        module, tokenizer, "tiny Llama", "memory", config.num_hidden_layers, config.num_attention_heads,
        config.max_position_embeddings, True, DECODER, config.num_key_value_heads,
        config.hidden_size // config.num_attention_heads, "Llama",
    )  # fmt: skip
