"""Versions of the app and of the libraries it runs on, for Help → About and bug reports."""

from __future__ import annotations

import core


def versions() -> dict[str, str]:
    """Name → version; libraries that are not installed read "not installed" (none is imported)."""
    from importlib import metadata  # only when asked: it costs start-up time

    found = {"Attention Lab": core.__version__}
    for label, dist in [
        ("Qt for Python (PySide6)", "PySide6-Essentials"),
        ("pyqtgraph", "pyqtgraph"),
        ("NumPy", "numpy"),
        ("PyTorch", "torch"),
        ("Transformers", "transformers"),
    ]:
        try:
            found[label] = metadata.version(dist)
        except metadata.PackageNotFoundError:
            found[label] = "not installed"
    from PySide6.QtCore import qVersion

    found["Qt"] = qVersion()
    return found
