"""How long a test waits, in one place.

Every wait in the suite is for an event or a condition (background work landing, a signal, a
repaint, a thread, a subprocess) and ends as soon as that happens; its limit is only how long a
broken test hangs before it fails. That limit is ``patience(seconds)``: ``seconds``, what the
step may take on a busy machine, times ``ATTENTION_LAB_WAIT_FACTOR`` (default 3, as a machine
running the suite on every core under other load runs a step several times slower than alone).
A slower machine raises the factor; no test asserts on wall time.

A fixed pause (``qtbot.wait(ms)``) only lets events run or time pass; whatever it checks
afterwards holds however long the pause lasted.
"""

from __future__ import annotations

import os

FACTOR = float(os.environ.get("ATTENTION_LAB_WAIT_FACTOR", "3"))


def patience(seconds: float) -> float:
    """The limit, in seconds, of a wait for something that takes up to ``seconds``."""
    return seconds * FACTOR


def patience_ms(seconds: float) -> int:
    """``patience`` in milliseconds, as pytest-qt's ``timeout=`` takes it."""
    return int(patience(seconds) * 1000)
