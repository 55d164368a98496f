"""The one way the benchmark scripts time a call: repeated wall times, and their median."""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable


def wall_times_ms(action: Callable[[], object], repeats: int = 9, warm_up: bool = True) -> list[float]:
    """Wall time of each of ``repeats`` calls of ``action()`` in ms (after one untimed call)."""
    if warm_up:
        action()
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        action()
        times.append((time.perf_counter() - start) * 1000)
    return times


def median_ms(action: Callable[[], object], repeats: int = 9, warm_up: bool = True) -> float:
    """Median wall time of ``action()`` in ms over ``repeats`` calls (after one untimed call)."""
    return statistics.median(wall_times_ms(action, repeats, warm_up))
