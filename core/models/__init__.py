"""Real trained models, offline: where they come from (``registry``, ``hf_cache``, ``smollm2``),
loading one (``loading``), and every head's attention weights over a text (``attention_run``).

    model = load_model("minilm")            # the bundled all-MiniLM-L6-v2, "smollm2", a folder or "gpt2"
    result = run(model, "The trophy didn't fit in the suitcase because it was too big.")
    result.attentions.shape                 # (6, 12, 17, 17) = (layers, heads, T, T)
    find_head(result, "it", "trophy").best  # layer 4, head 2: 0.58 (printed 1-based)

The names below are read from their modules on first use, so importing this package (or its
``kinds`` module, all the analyses may import from it) loads nothing else. torch and transformers
are imported inside the functions that need them, after the Hugging Face hub has been switched off.
Only safetensors weights are read; pickled weights and custom model code are refused.
"""

import importlib

_FROM = {
    "core.maths.head_analysis": ("HeadRanking", "ModelAttention", "find_head"),
    "core.free_memory": ("available_memory",),
    "core.models.attention_run": ("run",),
    "core.models.kinds": ("DECODER", "ENCODER", "LoadedModel", "check_kind"),
    "core.models.libraries": ("ModelsExtraMissing", "libraries"),
    "core.models.loading": ("MEMORY_FACTOR", "PICKLE_SUFFIXES", "Progress", "check_folder", "load_model"),
    "core.models.registry": ("BUNDLED", "DECODER_HEADS", "kind_of", "known_models", "resolve"),
}
_MODULE_OF = {name: module for module, names in _FROM.items() for name in names}
__all__ = sorted(_MODULE_OF)


def __getattr__(name: str):
    """``name`` read from its module, imported now if it was not yet."""
    if name not in _MODULE_OF:
        raise AttributeError(f"module 'core.models' has no attribute {name!r}")
    value = getattr(importlib.import_module(_MODULE_OF[name]), name)
    globals()[name] = value
    return value
