"""What the Inside a head steps share."""

from __future__ import annotations

from app.widgets.weight_bars import WeightBars


def counted_from_one(bars: WeightBars) -> None:
    """Label the bars' positions from 1, as every other view of the panel counts them."""
    n = len(bars.others.opts["x"])
    step = max(1, n // 12)
    bars.plot.getAxis("bottom").setTicks([[(k, str(k + 1)) for k in range(0, n, step)]])
