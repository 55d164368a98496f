"""Real trained models, offline: where they come from (``registry``, ``hf_cache``, ``smollm2``),
loading one (``loading``), and every head's attention weights over a text (``attention_run``).

    model = load_model("minilm")            # the bundled all-MiniLM-L6-v2, "smollm2", a folder or "gpt2"
    result = run(model, "The trophy didn't fit in the suitcase because it was too big.")
    result.attentions.shape                 # (6, 12, 17, 17) = (layers, heads, T, T)
    find_head(result, "it", "trophy").best  # layer 4, head 2: 0.58 (printed 1-based)

torch and transformers are imported inside the functions that need them, after the Hugging Face
hub has been switched off, so importing this package is cheap and never touches the network.
Only safetensors weights are read; pickled weights and custom model code are refused.
"""

from core.maths.head_analysis import HeadRanking, ModelAttention, find_head
from core.models.attention_run import run
from core.models.kinds import DECODER, ENCODER, check_kind
from core.models.libraries import ModelsExtraMissing, libraries
from core.models.loading import (
    MEMORY_FACTOR,
    PICKLE_SUFFIXES,
    LoadedModel,
    Progress,
    available_memory,
    check_folder,
    load_model,
)
from core.models.registry import BUNDLED, DECODER_HEADS, kind_of, known_models, resolve

__all__ = [
    "BUNDLED", "DECODER", "DECODER_HEADS", "ENCODER", "MEMORY_FACTOR", "PICKLE_SUFFIXES", "HeadRanking",
    "LoadedModel", "ModelAttention", "ModelsExtraMissing", "Progress", "available_memory", "check_folder",
    "check_kind", "find_head", "kind_of", "known_models", "libraries", "load_model", "resolve", "run",
]  # fmt: skip
