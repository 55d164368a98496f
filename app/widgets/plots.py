"""Plot factories every panel shares: a titled plot with axis labels, and a log-log plot against n."""

from __future__ import annotations

import pyqtgraph as pg


def plot(title: str, x: str = "", y: str = "", grid: bool = True) -> pg.PlotWidget:
    """A titled plot with axis labels and (unless ``grid`` is False) a light grid."""
    view = pg.PlotWidget(title=title)
    if x:
        view.setLabel("bottom", x)
    if y:
        view.setLabel("left", y)
    if grid:
        view.showGrid(x=True, y=True, alpha=0.25)
    view.setMenuEnabled(False)
    return view


def loglog_plot(
    title: str, y: str, x: str = "sequence length n (tokens)", legend_at=(-8, -8)
) -> pg.PlotWidget:
    """A log-log plot with plain (not SI-prefixed) tick labels and a legend at ``legend_at``
    (pixels; negative: from the right or bottom)."""
    view = plot(title, x, y)
    view.setLogMode(x=True, y=True)
    for side in ("left", "bottom"):
        view.getAxis(side).enableAutoSIPrefix(False)
    view.addLegend(offset=legend_at)
    return view
