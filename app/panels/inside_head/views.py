"""What the Inside a head steps share."""

from __future__ import annotations

from PySide6.QtWidgets import QWidget

from app.widgets.reflow_grid import ReflowGrid
from app.widgets.weight_bars import WeightBars


def counted_from_one(bars: WeightBars) -> None:
    """Label the bars' positions from 1, as every other view of the panel counts them."""
    n = len(bars.others.opts["x"])
    step = max(1, n // 12)
    bars.plot.getAxis("bottom").setTicks([[(k, str(k + 1)) for k in range(0, n, step)]])


def side_by_side(*widgets: QWidget) -> QWidget:
    """``widgets`` in one row where the room allows, else one under another."""
    grid = ReflowGrid(
        [(w, 0, k, 1) for k, w in enumerate(widgets)],
        [(w, k, 0, 1) for k, w in enumerate(widgets)],
        stretch=(0, 0),
    )
    for widget in widgets:  # an equal share each, side by side
        policy = widget.sizePolicy()
        policy.setHorizontalStretch(1)
        widget.setSizePolicy(policy)
    holder = QWidget()
    holder.setLayout(grid)
    return holder
