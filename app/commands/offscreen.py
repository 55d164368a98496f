"""What the two commands that build panels share (``smoke``, ``export-script``): panel keys
checked against PANELS, and an application on the offscreen platform with empty settings."""

from __future__ import annotations

import os
import tempfile
from collections.abc import Iterable, Iterator
from contextlib import contextmanager


def check_panels(keys: Iterable[str]) -> None:
    """ValueError naming the keys PANELS does not have, and the ones it has."""
    from app.panels import PANELS

    known = [entry.key for entry in PANELS]
    unknown = sorted(set(keys) - set(known))
    if unknown:
        raise ValueError(f"unknown panel {', '.join(unknown)}; choose from {', '.join(known)}")


@contextmanager
def offscreen_app() -> Iterator:
    """The QApplication (offscreen unless a platform is set), its settings in a temporary folder
    that goes afterwards: a run never reads or changes the user's."""
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    from PySide6.QtWidgets import QApplication

    from app import settings

    with tempfile.TemporaryDirectory() as folder:
        settings.use_folder(folder)
        yield QApplication.instance() or QApplication([])
