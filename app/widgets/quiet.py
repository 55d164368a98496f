"""Changing a control without its change signal: the one place in the app that holds signals.

with quiet(spin):       # no valueChanged: nothing recomputes
    spin.setMaximum(9)  # a narrower range may clamp the value
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from PySide6.QtCore import QObject


@contextmanager
def quiet(*objects: QObject) -> Iterator[None]:
    """Hold the signals of ``objects`` while the body runs; each is as it was afterwards."""
    before = [o.blockSignals(True) for o in objects]
    try:
        yield
    finally:
        for o, was in zip(objects, before, strict=True):
            o.blockSignals(was)
