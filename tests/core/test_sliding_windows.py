"""Which layers slide, read from config.json, against the layer types transformers derives."""

import pytest
from transformers import Gemma2Config, Gemma3TextConfig, MistralConfig, Qwen2Config

from core.decoder.windows import sliding_layers, window_sentence
from core.models.registry import describe

CONFIGS = {
    "qwen2": lambda: Qwen2Config(
        num_hidden_layers=6, sliding_window=8, use_sliding_window=True, max_window_layers=2
    ),
    "gemma2": lambda: Gemma2Config(num_hidden_layers=5, sliding_window=8),
    "gemma3": lambda: Gemma3TextConfig(num_hidden_layers=13, sliding_window=8),
}


@pytest.mark.parametrize("name", CONFIGS)
def test_old_and_new_configs_give_the_layers_transformers_slides(name):
    config = CONFIGS[name]()
    expected = tuple(i for i, t in enumerate(config.layer_types) if t == "sliding_attention")
    assert 0 < len(expected) < config.num_hidden_layers
    as_saved = config.to_dict()
    assert sliding_layers(as_saved) == (8, expected)
    older = {k: v for k, v in as_saved.items() if k != "layer_types"}  # written before layer_types
    assert sliding_layers(older) == (8, expected)


def test_mistral_slides_everywhere_and_a_switched_off_window_is_none():
    assert sliding_layers(MistralConfig(num_hidden_layers=3, sliding_window=16).to_dict()) == (16, (0, 1, 2))
    assert sliding_layers(MistralConfig(num_hidden_layers=3, sliding_window=None).to_dict()) == (None, ())
    off = Qwen2Config(num_hidden_layers=4, sliding_window=8, use_sliding_window=False).to_dict()
    assert sliding_layers(off) == (None, ())


def test_the_listing_reads_the_window_from_a_saved_folder(tmp_path):
    config = CONFIGS["gemma3"]()
    config.architectures = ["Gemma3ForCausalLM"]
    config.save_pretrained(tmp_path)
    entry = describe("tiny", "tiny", tmp_path)
    assert (entry.window, entry.sliding) == (8, (0, 1, 2, 3, 4, 6, 7, 8, 9, 10, 12))
    assert window_sentence("tiny", entry.window, entry.sliding, entry.layers) == (
        "tiny: a window of 8 tokens on 11 of its 13 layers (layers 6 and 12 see the whole text)."
    )
    assert window_sentence("one", 4, (1,), 2).endswith("(layer 1 sees the whole text).")
