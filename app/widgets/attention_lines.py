"""AttentionLines: the head view made popular by bertviz, for any stack of weight matrices.

The looking tokens are listed on the left, the tokens looked at on the right, and every weight
is a line between them whose opacity is the weight. Each head has its own colour; the chips
above the lines show or hide heads. Pointing at a token keeps only its lines.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import Signal
from PySide6.QtGui import QColor
from PySide6.QtWidgets import QHBoxLayout, QLabel, QToolButton, QVBoxLayout, QWidget

from app.widgets.message_bar import follow_app_font
from app.widgets.plots import tick_label
from app.widgets.quiet import quiet
from app.widgets.reflow_grid import ReflowGrid

LEVELS = 8  # opacity steps; all the lines of one head and one step share one plot item
MIN_WEIGHT = 0.02  # lighter lines would be invisible; they are not drawn
MAX_TICK_LABELS = 80
EDGE = 0.12  # pointer within this distance of a column (in 0…1 view units) selects its token


def head_colors(n: int) -> list[QColor]:
    """n distinct, evenly spaced hues."""
    return [pg.intColor(h, hues=max(n, 1), values=1, minValue=150, maxValue=230) for h in range(n)]


def lines_by_level(w: np.ndarray, focus: tuple[str, int] | None = None) -> tuple[np.ndarray, np.ndarray]:
    """The lines to draw for one head's (n_q, n_k) weights, grouped by opacity step.

    Returns ``ends`` (2·lines,) int: row, column of each line in turn, the lines of step 0 first
    and row-major within a step, and ``starts`` (LEVELS + 1,): the first line of each step (the
    last entry is the number of lines). Weights under MIN_WEIGHT are left out; ``focus`` ("left",
    i) keeps row i only, ("right", j) column j only.
    """
    if focus is None:
        rows, cols = np.divmod(np.flatnonzero(w >= MIN_WEIGHT), w.shape[1])
    elif focus[0] == "left":
        cols = np.flatnonzero(w[focus[1]] >= MIN_WEIGHT)
        rows = np.full_like(cols, focus[1])
    else:
        rows = np.flatnonzero(w[:, focus[1]] >= MIN_WEIGHT)
        cols = np.full_like(rows, focus[1])
    level = np.minimum((w[rows, cols] * LEVELS).astype(int), LEVELS - 1)
    order = np.argsort(level, kind="stable")
    starts = np.searchsorted(level[order], np.arange(LEVELS + 1))
    return np.column_stack([rows[order], cols[order]]).ravel(), starts


class AttentionLines(QWidget):
    """``set_data(weights (heads, n_q, n_k), row_labels, col_labels)``.

    Signals: headsChanged(set of visible heads), focused(side, index) with side "left"/"right"
    and index −1 when the pointer leaves the tokens.
    """

    headsChanged = Signal(object)
    focused = Signal(str, int)

    def __init__(self, parent=None):
        super().__init__(parent)
        self.weights = np.zeros((0, 0, 0))
        self.row_labels: list[str] = []
        self.col_labels: list[str] = []
        self.visible: set[int] = set()
        self.focus: tuple[str, int] | None = None
        self.colors: list[QColor] = []
        self.chips: list[QToolButton] = []
        self.curves: list[list[pg.PlotCurveItem]] = []  # [head][level]

        self.chip_row = QHBoxLayout()  # holds the chips' grid, made again when the head count changes
        self.chip_row.setContentsMargins(0, 0, 0, 0)
        self.heads_label, self.chip_filler = QLabel("Heads:"), QLabel()
        self.chip_grid: ReflowGrid | None = None
        self.view = pg.GraphicsLayoutWidget()
        self.plot = self.view.addPlot()
        self.plot.invertY(True)
        self.plot.setMouseEnabled(x=False, y=False)
        self.plot.setMenuEnabled(False)
        self.plot.hideButtons()
        self.plot.hideAxis("bottom")
        self.plot.showAxis("right")
        for side in ("left", "right"):
            axis = self.plot.getAxis(side)
            axis.setTickPen(pg.mkPen(None))
            axis.setTicks([[]])  # token labels only: no numbers while nothing is shown
        self.plot.setXRange(0, 1, padding=0.01)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addLayout(self.chip_row)
        layout.addWidget(self.view, 1)
        self.view.scene().sigMouseMoved.connect(self._on_move)

    # --- data --------------------------------------------------------------------------------
    def set_data(
        self, weights: np.ndarray, row_labels: Sequence[str], col_labels: Sequence[str] | None = None
    ) -> None:
        """Show ``weights`` (heads, n_q, n_k) in [0, 1]; rows are the looking tokens."""
        weights = np.asarray(weights)
        if weights.ndim != 3:
            raise ValueError(f"AttentionLines needs (heads, n_q, n_k) weights, got shape {weights.shape}.")
        n_heads, n_q, n_k = weights.shape
        col_labels = row_labels if col_labels is None else col_labels
        if len(row_labels) != n_q or len(col_labels) != n_k:
            raise ValueError("AttentionLines needs one label per row and per column.")
        self.set_head_count(n_heads)
        resized = weights.shape[1:] != self.weights.shape[1:]
        self.weights = weights
        self.row_labels, self.col_labels = list(row_labels), list(col_labels)
        if self.focus is not None and self.focus[1] >= (n_q if self.focus[0] == "left" else n_k):
            self.focus = None
        self._set_ticks()
        if resized:
            top = max(n_q, n_k)
            self.plot.setYRange(-0.5, top - 0.5, padding=0.01)
        self._draw()

    def set_head_count(self, n: int) -> None:
        """A chip and a set of lines for each of ``n`` heads, all shown; none drawn until
        ``set_data`` when the count changes (nothing happens when it has ``n`` already)."""
        if n != len(self.curves):
            self._make_heads(n)
            self.weights = np.zeros((n, 0, 0))

    def set_visible_heads(self, heads: Iterable[int]) -> None:
        """Show only ``heads`` (0-based); the chips follow."""
        self.visible = {h for h in heads if 0 <= h < len(self.curves)}
        for h, chip in enumerate(self.chips):
            with quiet(chip):
                chip.setChecked(h in self.visible)
        self._draw()
        self.headsChanged.emit(set(self.visible))

    def set_focus(self, side: str | None, index: int = -1) -> None:
        """Keep only the lines of one token: ("left", i) its outgoing lines, ("right", j) the
        lines into it; None shows every line."""
        focus = (side, index) if side in ("left", "right") and index >= 0 else None
        if focus != self.focus:
            self.focus = focus
            self._draw()
            self.focused.emit(*(focus or ("", -1)))

    def drawn(self, head: int) -> dict[tuple[int, int], int]:
        """{(row, column): opacity step} of every line drawn for ``head`` (for tests and export)."""
        lines = {}
        for level, curve in enumerate(self.curves[head]):
            x, y = curve.getData()
            if x is None or not curve.isVisible():
                continue
            for i, j in zip(y[0::2], y[1::2], strict=True):
                lines[(int(i), int(j))] = level
        return lines

    # --- drawing -----------------------------------------------------------------------------
    def _make_heads(self, n: int) -> None:
        for curves in self.curves:
            for curve in curves:
                self.plot.removeItem(curve)
        for chip in self.chips:
            chip.deleteLater()
        self.colors = head_colors(n)
        self.curves, self.chips = [], []
        for h, color in enumerate(self.colors):
            curves = []
            for level in range(LEVELS):
                line = QColor(color)
                line.setAlphaF((level + 1) / LEVELS)
                # 1-pixel pens without antialiasing: Qt strokes thicker or smoothed lines of many
                # crossing segments several times slower, and the head view must redraw per keystroke
                curve = pg.PlotCurveItem(pen=pg.mkPen(line, width=1), connect="pairs", antialias=False)
                self.plot.addItem(curve)
                curves.append(curve)
            self.curves.append(curves)
            chip = QToolButton()
            chip.setText(str(h + 1))
            chip.setCheckable(True)
            chip.setChecked(True)
            chip.setToolTip(f"head {h + 1}: click to show or hide its lines")
            chip.setStyleSheet(
                f"QToolButton {{ border: 2px solid {color.name()}; border-radius: 3px; padding: 1px 4px; }}"
                f"QToolButton:checked {{ background: {color.name()}; color: black; }}"
            )
            follow_app_font(chip)  # a style sheet pins the font it was set with
            chip.toggled.connect(lambda on, h=h: self._toggle(h, on))
            self.chips.append(chip)
        self._lay_chips()
        self.visible = set(range(n))

    def _lay_chips(self) -> None:
        """The chips on one row, or on two where the room is short (large text)."""
        if self.chip_grid is not None:
            for widget, *_ in self.chip_grid.arrangements[0]:
                self.chip_grid.removeWidget(widget)
            self.chip_row.removeItem(self.chip_grid)
            self.chip_grid.deleteLater()
        n, half = len(self.chips), (len(self.chips) + 1) // 2
        wide = [(self.heads_label, 0, 0, 1), *((c, 0, 1 + h, 1) for h, c in enumerate(self.chips))]
        narrow = [(self.heads_label, 0, 0, 1)]
        narrow += [(c, h // half, 1 + h % half, 1) for h, c in enumerate(self.chips)]
        wide.append((self.chip_filler, 0, n + 1, 1))
        narrow.append((self.chip_filler, 0, half + 1, 1))
        self.chip_grid = ReflowGrid(wide, narrow, stretch=(n + 1, half + 1))
        self.chip_row.addLayout(self.chip_grid)

    def _toggle(self, head: int, on: bool) -> None:
        self.visible = (self.visible | {head}) if on else (self.visible - {head})
        self._draw()
        self.headsChanged.emit(set(self.visible))

    def _draw(self) -> None:
        for h, curves in enumerate(self.curves):
            if h not in self.visible:
                for curve in curves:
                    curve.setVisible(False)
                continue
            ends, starts = lines_by_level(self.weights[h], self.focus)
            xs = np.tile([0.0, 1.0], int(starts[-1]))
            for k, curve in enumerate(curves):
                a, b = 2 * int(starts[k]), 2 * int(starts[k + 1])
                curve.setData(xs[a:b], ends[a:b])
                curve.setVisible(b > a)

    def _set_ticks(self) -> None:
        def ticks(labels):
            stride = max(1, int(np.ceil(len(labels) / MAX_TICK_LABELS)))
            return [[(float(k), tick_label(labels[k])) for k in range(0, len(labels), stride)]]

        self.plot.getAxis("left").setTicks(ticks(self.row_labels))
        self.plot.getAxis("right").setTicks(ticks(self.col_labels))

    def _on_move(self, scene_pos) -> None:
        if not self.plot.sceneBoundingRect().contains(scene_pos) or not self.row_labels:
            return
        p = self.plot.vb.mapSceneToView(scene_pos)
        index = round(p.y())
        if p.x() < EDGE and 0 <= index < len(self.row_labels):
            self.set_focus("left", index)
        elif p.x() > 1 - EDGE and 0 <= index < len(self.col_labels):
            self.set_focus("right", index)
        else:
            self.set_focus(None)

    def leaveEvent(self, event) -> None:
        self.set_focus(None)
        super().leaveEvent(event)
