"""torch and transformers, imported with the Hugging Face hub switched off.

torch, transformers = libraries()   # ModelsExtraMissing says what to install when absent
"""

from __future__ import annotations

from core.heavy_load import quiet_import
from core.install_advice import models_advice
from core.offline import switch_off_hub


class ModelsExtraMissing(ImportError):
    """torch/transformers are not installed."""


def libraries():
    """Import torch and transformers with the hub switched off; say which extra to install."""
    switch_off_hub()
    try:
        torch = quiet_import("torch")
        transformers = quiet_import("transformers")
    except ImportError as exc:
        raise ModelsExtraMissing(f"Real models need torch and transformers. {models_advice()}") from exc
    transformers.utils.logging.set_verbosity_error()
    transformers.utils.logging.disable_progress_bar()
    return torch, transformers
