"""Where Attention Lab keeps what it adds for the user (converted models), outside any project folder.

    data_folder()                    # e.g. ~/.local/share/attention-lab on Linux
    ATTENTION_LAB_DATA=/tmp/x ...    # the environment variable moves it (tests, portable installs)

platformdirs decides the folder where it is installed; otherwise the XDG rules on Linux and each
system's usual place elsewhere. The folder is created on first use.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

APP = "attention-lab"
OVERRIDE = "ATTENTION_LAB_DATA"


def data_folder() -> Path:
    """The user's data folder for Attention Lab (created if missing)."""
    folder = Path(os.environ[OVERRIDE]).expanduser() if os.environ.get(OVERRIDE) else _default()
    folder.mkdir(parents=True, exist_ok=True)
    return folder


def _default() -> Path:
    try:
        import platformdirs
    except ImportError:
        pass
    else:
        return Path(platformdirs.user_data_dir(APP, appauthor=False))
    home = Path.home()
    if sys.platform == "win32":
        return Path(os.environ.get("LOCALAPPDATA") or home / "AppData" / "Local") / APP
    if sys.platform == "darwin":
        return home / "Library" / "Application Support" / APP
    xdg = os.environ.get("XDG_DATA_HOME", "")
    return (Path(xdg) if os.path.isabs(xdg) else home / ".local" / "share") / APP
