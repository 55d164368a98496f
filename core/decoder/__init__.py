"""Decoder language models: predictions and generation (``prediction``), and the model layer
every decoder view reads through: one adapter per family (``adapter``, ``families``), the hooks
and attention taps (``hooks``), and one analysis object per loaded model (``analysis``).

    from core import decoder as dec
    p = dec.predict(model, "The capital of France is")
    dec.adapter_of(model.module).shape.layers
"""

from core.decoder.adapter import Adapter, DecoderShape, adapter_of
from core.decoder.families import FAMILIES, family_of
from core.decoder.prediction import (
    MAX_CONTEXT,
    CacheSize,
    Chosen,
    DecodeTiming,
    Generation,
    Prediction,
    cache_argument,
    cache_size,
    context_limit,
    encode,
    generate,
    kv_head_of,
    pieces,
    predict,
    prefill,
    query_groups,
    time_decode,
    visible,
)

__all__ = [
    "FAMILIES", "MAX_CONTEXT", "Adapter", "CacheSize", "Chosen", "DecodeTiming", "DecoderShape",
    "Generation", "Prediction", "adapter_of", "cache_argument", "cache_size", "context_limit", "encode",
    "family_of", "generate", "kv_head_of", "pieces", "predict", "prefill", "query_groups", "time_decode",
    "visible",
]  # fmt: skip
