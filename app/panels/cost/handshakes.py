"""Step 2: n people on a circle, one line per handshake; doubling n about quadruples the lines."""

from __future__ import annotations

import numpy as np
import pyqtgraph as pg
from PySide6.QtWidgets import QHBoxLayout, QVBoxLayout, QWidget

from app.panels.cost import scripts
from app.panels.cost.plots import COLORS
from app.panels.cost.state import HandshakeResult, HandshakeState, compute_handshakes
from app.panels.scripts import Script
from app.panels.step import Live, Notice, Step
from app.widgets import LabelledSlider
from app.widgets.plots import plot
from app.widgets.text import note
from core.maths.complexity import handshakes


class HandshakePage(Step):
    def __init__(self):
        super().__init__(Live(HandshakeState(), compute_handshakes))
        self.people = self.bind(
            LabelledSlider("people n", 2, 40, self.state.people, integer=True), "people", int
        )
        self.note = note()
        self.room = plot("Everyone greets everyone once", grid=False)
        self.room.setAspectLocked(True)
        self.room.hideAxis("left")
        self.room.hideAxis("bottom")
        self.room.setMouseEnabled(x=False, y=False)
        self.lines = self.room.plot([], [], pen=pg.mkPen(COLORS[0], width=1), connect="pairs")
        self.dots = self.room.plot([], [], pen=None, symbol="o", symbolSize=12, symbolBrush=COLORS[1])
        self.growth = plot("Handshakes against people", "people n", "handshakes n(n−1)/2")
        people = np.arange(2, 81)
        self.growth.plot(people, [handshakes(int(k)) for k in people], pen=pg.mkPen(COLORS[0], width=2.5))
        self.marks = self.growth.plot([], [], pen=None, symbol="o", symbolSize=10, symbolBrush=COLORS[1])
        views = QHBoxLayout()
        views.addWidget(self.room, 1)
        views.addWidget(self.growth, 1)
        controls = QVBoxLayout()
        controls.addWidget(self.people)
        controls.addWidget(self.note)
        self.layout_with(None, controls, views, on_top=True)

    def views(self) -> dict[str, QWidget]:
        return {"handshakes": self.room}

    @property
    def n(self) -> int:
        return self.result.n

    def script(self) -> Script:
        return scripts.handshakes(self.state)

    def draw(self, r: HandshakeResult) -> Notice:
        x, y = r.seats[:, 0], r.seats[:, 1]
        self.lines.setData(x[r.ends], y[r.ends])
        self.dots.setData(x, y)
        self.marks.setData([r.n, 2 * r.n], [r.now, r.doubled])
        self.note.setText(
            f"<b>{r.n} people make {r.now:,} handshakes</b> (n(n−1)/2). Double the room to {2 * r.n} "
            f"and there are {r.doubled:,}: {r.doubled / r.now:.2f}× as many, since n(n−1)/2 grows like "
            f"n²/2. Attention scores all n² ordered pairs, each token with itself too: {r.n**2:,} for "
            f"{r.n} tokens."
        )
        return None

    def exercise(self) -> None:
        for n in (2, 40, 20):
            self.people.setValue(n)
