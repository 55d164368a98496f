"""torch and transformers, imported with the Hugging Face hub switched off and torch given half
the cores.

torch, transformers = libraries()   # ModelsExtraMissing says what to install when absent

torch starts one thread per core, and each of its parallel operations waits for the slowest
thread. When another program keeps a core busy, that thread runs only in the time slices the
busy core spares, and the many small products of a model's analyses slow down five to ten times
(measured on 2 cores: a prediction 0.20 s on one thread against 1.3 s on two, the logit lens 0.7 s
against 2.8 s). So torch gets half the cores this process may use, at least one; the other half
stays free for the window and the rest of the machine. ``OMP_NUM_THREADS`` set by the user wins.
"""

from __future__ import annotations

import os

from core.models.advice import models_advice
from core.models.heavy_load import quiet_import
from core.offline import switch_off_hub


class ModelsExtraMissing(ImportError):
    """torch/transformers are not installed."""


def libraries():
    """Import torch and transformers with the hub switched off; say which extra to install."""
    switch_off_hub()
    try:
        quiet_import("torch")
        quiet_import("transformers")
    except ImportError as exc:
        raise ModelsExtraMissing(f"Real models need torch and transformers. {models_advice()}") from exc
    import torch  # imported just above, quietly; these lines show the linter who imports them
    import transformers

    transformers.utils.logging.set_verbosity_error()
    transformers.utils.logging.disable_progress_bar()
    if "OMP_NUM_THREADS" not in os.environ and torch.get_num_threads() != torch_threads():
        torch.set_num_threads(torch_threads())
    return torch, transformers


def torch_threads() -> int:
    """The threads torch's operations use: half the cores this process may run on, at least one."""
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1
    return max(1, cores // 2)
