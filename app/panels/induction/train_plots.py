"""Step 2's plots: colours of the heads, the uniform guess's level and the marker where an
induction head formed."""

from __future__ import annotations

import math

import pyqtgraph as pg

FIRST, REPEAT, FORMED_COLOR = "#7f7f7f", "#ff7f0e", "#2ca02c"
HEAD_COLORS = ("#1f77b4", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#17becf", "#bcbd22", "#7f7f7f")


def head_pen(layer: int, head: int, heads: int, dashed: bool) -> pg.QtGui.QPen:
    """One colour per head, layer-2 heads thicker; previous-token scores dashed."""
    pen = pg.mkPen(HEAD_COLORS[(layer * heads + head) % len(HEAD_COLORS)], width=2.5 if layer else 1.5)
    if dashed:
        pen.setStyle(pg.QtCore.Qt.PenStyle.DashLine)
    return pen


def guess_line(loss_plot: pg.PlotWidget) -> pg.InfiniteLine:
    """A dotted line at the loss of a uniform guess, ln V (its height is set per run)."""
    line = pg.InfiniteLine(
        angle=0,
        pen=pg.mkPen(FIRST, style=pg.QtCore.Qt.PenStyle.DotLine),
        label="ln V",
        labelOpts={"position": 0.05},
    )
    loss_plot.addItem(line)
    return line


def marker(top: bool) -> pg.InfiniteLine:
    """A vertical line at the step where the induction head formed, labelled at the plot's top or
    bottom edge (place_marker picks the side)."""
    return pg.InfiniteLine(
        angle=90,
        pen=pg.mkPen(FORMED_COLOR, width=2),
        label="",
        labelOpts={"position": 1.0 if top else 0.0, "color": "#ffffff", "fill": FORMED_COLOR},
    )


def place_marker(line: pg.InfiniteLine) -> None:
    """Put the label left of its line, where the curves are before the head forms: high losses
    leave the loss plot's bottom free, low scores the score plot's top. Right of it when the
    label does not fit on the left."""
    vb = line.getViewBox()
    if vb is None or not line.isVisible():
        return
    room = (line.value() - vb.viewRange()[0][0]) / max(vb.viewPixelSize()[0], 1e-12)  # pixels
    side = 1 if line.label.boundingRect().width() < room else 0
    edge = 0 if line.label.orthoPos > 0.5 else 1  # the label's top at the top edge, or its bottom
    line.label.anchors = [(side, edge), (side, edge)]
    line.label.updatePosition()


def set_ranges(loss_plot: pg.PlotWidget, score_plot: pg.PlotWidget, guess: pg.InfiniteLine, settings) -> None:
    """Axes for a run of ``settings``: steps across, losses from 0 to above ln V."""
    for view in (loss_plot, score_plot):
        view.setXRange(0, settings.steps, padding=0.02)
    loss_plot.setYRange(0, math.log(settings.vocab) * 1.3, padding=0)
    guess.setValue(math.log(settings.vocab))
