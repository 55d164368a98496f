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
