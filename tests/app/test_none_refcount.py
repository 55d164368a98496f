import sys

from PySide6.QtCore import QPointF

import app  # noqa: F401  (the guard lives in the package's __init__)


def test_many_void_qt_calls_do_not_use_up_none():
    point = QPointF()
    for _ in range(200_000):  # more than None's whole count on Python 3.11 without the guard
        point.setX(1.0)
    assert sys.getrefcount(None) > 1_000_000
