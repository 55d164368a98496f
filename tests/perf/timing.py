"""The one way the benchmark scripts time a call: the median of repeated wall times."""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable


def median_ms(action: Callable[[], object], repeats: int = 9, warm_up: bool = True) -> float:
    """Median wall time of ``action()`` in ms over ``repeats`` calls (after one untimed call)."""
    if warm_up:
        action()
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        action()
        times.append((time.perf_counter() - start) * 1000)
    return statistics.median(times)
