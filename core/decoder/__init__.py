"""The model layer: the only code that names a decoder's internals.

One family table (``families``), one adapter per loaded module that reads its parts under the same
names for every family (``adapter``), and the hooks and attention taps (``hooks``).

    from core.decoder import adapter_of
    adapter_of(model.module).shape.layers
"""

from core.decoder.adapter import Adapter, DecoderShape, adapter_of
from core.decoder.families import FAMILIES, family_of

__all__ = ["FAMILIES", "Adapter", "DecoderShape", "adapter_of", "family_of"]
