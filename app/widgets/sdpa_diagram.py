"""The paper's "Scaled Dot-Product Attention" block diagram, redrawn with live shapes.

Boxes from bottom to top: the inputs Q, K, V; MatMul (Q·Kᵀ); Scale; Mask (optional); SoftMax;
MatMul (·V). The current step's box is highlighted; each box has its output shape beside it.
"""

from __future__ import annotations

import itertools

from PySide6.QtCore import QPointF, QRectF, Qt
from PySide6.QtGui import QColor, QPainter, QPainterPath, QPalette, QPen
from PySide6.QtWidgets import QSizePolicy, QWidget

BOXES = ("inputs", "matmul", "scale", "mask", "softmax", "output")
LABELS = {
    "matmul": "MatMul",
    "scale": "Scale",
    "mask": "Mask (opt.)",
    "softmax": "SoftMax",
    "output": "MatMul",
}
FILL = {
    "matmul": "#c9b3e6",
    "scale": "#f5e79e",
    "mask": "#f2c3d9",
    "softmax": "#b9e4c9",
    "output": "#c9b3e6",
    "inputs": "#e0e0e0",
}


class SdpaDiagram(QWidget):
    """``set_shapes(n_q, n_k, d_k, d_v)`` and ``set_active(box)`` with a name from BOXES or None."""

    def __init__(self, parent=None):
        super().__init__(parent)
        self.shapes = {"Q": "", "K": "", "V": ""}
        self.active: str | None = None
        self.setSizePolicy(QSizePolicy.Policy.Preferred, QSizePolicy.Policy.Expanding)
        self.setMinimumSize(230, 320)

    def set_shapes(self, n_q: int, n_k: int, d_k: int, d_v: int) -> None:
        grid = f"{n_q}×{n_k}"
        self.shapes = {
            "Q": f"{n_q}×{d_k}",
            "K": f"{n_k}×{d_k}",
            "V": f"{n_k}×{d_v}",
            "matmul": grid,
            "scale": grid,
            "mask": grid,
            "softmax": grid,
            "output": f"{n_q}×{d_v}",
        }
        self.update()

    def set_active(self, box: str | None) -> None:
        if box is not None and box not in BOXES:
            raise ValueError(f"Unknown diagram box {box!r}.")
        self.active = box
        self.update()

    def box_rects(self) -> dict[str, QRectF]:
        """Where each box is drawn, for the current widget size."""
        w, h = self.width(), self.height()
        fm = self.fontMetrics()
        bh = fm.height() * 1.9
        gap = (h - bh * 6) / 6.5
        bw = min(w * 0.52, fm.horizontalAdvance("Mask (opt.)") * 1.6)
        x = w * 0.08
        rects = {}
        for k, name in enumerate(BOXES[1:]):
            y = h - (k + 2) * (bh + gap)
            rects[name] = QRectF(x, y, bw, bh)
        iw = bw / 3.6
        y = h - bh - gap * 0.6
        for k, name in enumerate("QKV"):
            rects[name] = QRectF(x + k * (bw - iw) / 2, y, iw, bh)
        return rects

    def paintEvent(self, _event) -> None:
        p = QPainter(self)
        p.setRenderHint(QPainter.RenderHint.Antialiasing)
        text = self.palette().color(QPalette.ColorRole.WindowText)
        rects = self.box_rects()
        p.setPen(QPen(text, 1.5))
        order = ["matmul", "scale", "mask", "softmax", "output"]
        for a, b in itertools.pairwise(order):
            self._arrow(p, rects[a].center().x(), rects[a].top(), rects[b].bottom())
        for name in "QK":
            r = rects[name]
            self._arrow(p, r.center().x(), r.top(), rects["matmul"].bottom())
        v, out = rects["V"], rects["output"]
        route = QPainterPath(QPointF(v.center().x(), v.top()))
        side = out.right() + 18
        route.lineTo(v.center().x(), v.top() - 8)
        route.lineTo(side, v.top() - 8)
        route.lineTo(side, out.center().y())
        p.drawPath(route)
        self._arrow_head(p, QPointF(out.right(), out.center().y()), -1)
        p.drawLine(QPointF(side, out.center().y()), QPointF(out.right() + 1, out.center().y()))
        self._arrow(p, out.center().x(), out.top(), out.top() - 18)
        for name, rect in rects.items():
            self._box(p, name, rect, text)

    def _box(self, p: QPainter, name: str, rect: QRectF, text: QColor) -> None:
        group = "inputs" if name in "QKV" else name
        active = self.active == group
        pen = QPen(QColor("#ff8c00") if active else text, 3 if active else 1)
        if name == "mask":  # optional: no panel that draws this diagram masks
            pen.setStyle(Qt.PenStyle.DashLine)
        p.setPen(pen)
        p.setBrush(QColor(FILL[group]))
        p.drawRoundedRect(rect, 5, 5)
        p.setPen(QColor("#202020"))
        p.drawText(rect, Qt.AlignmentFlag.AlignCenter, name if name in "QKV" else LABELS[name])
        p.setPen(text)
        shape = self.shapes.get(name, "")
        if name in "QKV":
            p.drawText(
                QRectF(rect.left() - 10, rect.bottom() + 2, rect.width() + 20, rect.height() / 1.6),
                Qt.AlignmentFlag.AlignHCenter | Qt.AlignmentFlag.AlignTop,
                shape,
            )
        else:
            p.drawText(
                QRectF(rect.right() + 26, rect.top(), 200, rect.height()),
                Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter,
                shape,
            )

    def _arrow(self, p: QPainter, x: float, y0: float, y1: float) -> None:
        p.drawLine(QPointF(x, y0), QPointF(x, y1 + 1))
        self._arrow_head(p, QPointF(x, y1), 0)

    @staticmethod
    def _arrow_head(p: QPainter, tip: QPointF, direction: int) -> None:
        """An arrow head at ``tip`` pointing up (0) or left (−1)."""
        s = 6
        if direction == 0:
            pts = [tip, QPointF(tip.x() - s / 1.5, tip.y() + s), QPointF(tip.x() + s / 1.5, tip.y() + s)]
        else:
            pts = [tip, QPointF(tip.x() + s, tip.y() - s / 1.5), QPointF(tip.x() + s, tip.y() + s / 1.5)]
        p.save()
        p.setBrush(p.pen().color())
        p.drawPolygon(pts)
        p.restore()
