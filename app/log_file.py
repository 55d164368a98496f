"""The app's log file: unexpected errors with their tracebacks, kept where a person can find them.

    path = log_file.start()   # <data folder>/attention-lab.log, rotating; None if it cannot be written
    log_file.where()          # "Details are in …" for a message, naming the file (or the terminal)

Three files of at most 1 MB each are kept (attention-lab.log, .log.1, .log.2).
"""

from __future__ import annotations

import logging
import logging.handlers
from pathlib import Path

from core.user_data import data_folder

NAME = "attention-lab.log"
MAX_BYTES, BACKUPS = 1_000_000, 2
_path: Path | None = None


def start() -> Path | None:
    """Send the app's and core's warnings and errors to the rotating log file (once); its path,
    or None when the data folder cannot be written (they then go to stderr only)."""
    global _path
    if _path is not None:
        return _path
    try:
        path = data_folder() / NAME
        handler = logging.handlers.RotatingFileHandler(
            path, maxBytes=MAX_BYTES, backupCount=BACKUPS, encoding="utf-8"
        )
    except OSError:
        return None
    handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    handler.setLevel(logging.WARNING)
    for name in ("app", "core"):
        logging.getLogger(name).addHandler(handler)
    _path = path
    return path


def where() -> str:
    """Where a message's details went, as a sentence."""
    return f"Details are in {_path}." if _path is not None else "Details were printed in the terminal."
