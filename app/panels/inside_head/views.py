"""What the Inside a head steps share."""

from __future__ import annotations

from app.panels.inside_head.state import HeadResult, PartsResult
from app.panels.step import Notice, Step
from app.widgets.weight_bars import WeightBars


def counted_from_one(bars: WeightBars) -> None:
    """Label the bars' positions from 1, as every other view of the panel counts them."""
    n = len(bars.others.opts["x"])
    step = max(1, n // 12)
    bars.plot.getAxis("bottom").setTicks([[(k, str(k + 1)) for k in range(0, n, step)]])


class PartsStep(Step):
    """Steps 2–4: they draw the result's ``parts``, which land after step 1; until then the
    step keeps what it shows."""

    def draw(self, r: HeadResult) -> Notice:
        if r.parts is None:
            return self.later()  # drawn when the parts land
        return self.show(r.parts)

    def show(self, p: PartsResult) -> Notice:
        """Draw steps 2–4's ``p``; by the subclass."""
        raise NotImplementedError

    @property
    def why_not(self) -> str:
        """Why steps 2–4 are not shown for this model ("" while they are computed)."""
        parts = self.result.parts
        return "" if parts is None else parts.why_not
