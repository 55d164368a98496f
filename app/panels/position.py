"""Panel "Position": attention cannot see word order until positions are encoded; sinusoidal
encodings, a learned table that runs out, RoPE's clock hands, and RoPE past the trained length."""

from __future__ import annotations

from PySide6.QtWidgets import QStackedWidget, QWidget

from app.panels.base import Panel
from app.panels.position_steps.extension import ExtensionPage
from app.panels.position_steps.learned_table import TablePage
from app.panels.position_steps.page import Notice, Page
from app.panels.position_steps.rope_hands import RopePage
from app.panels.position_steps.sinusoidal import SinusoidalPage
from app.panels.position_steps.word_order import OrderPage


class PositionPanel(Panel):
    key = "position"
    title = "Position"
    steps = (
        "Word order is invisible",
        "Sinusoidal encoding",
        "Learned table",
        "RoPE clock hands",
        "Past the trained length",
    )

    def __init__(self, parent=None):
        super().__init__(parent)
        self.order = OrderPage(self._report)
        self.sinusoidal = SinusoidalPage(self._report)
        self.table = TablePage(self._report)
        self.rope = RopePage(self._report)
        self.extension = ExtensionPage(self._report)
        self.pages = QStackedWidget()
        for page in self._pages():
            self.pages.addWidget(page)
            page.apply()
        self.body.addWidget(self.pages)
        self.set_step(0)

    def _pages(self) -> tuple[Page, ...]:
        return (self.order, self.sinusoidal, self.table, self.rope, self.extension)

    def _report(self, notice: Notice) -> None:
        if notice is None:
            self.clear_message()
        else:
            self.show_message(*notice)

    def show_step(self, i: int) -> None:
        self.pages.setCurrentIndex(i)
        self._report(self._pages()[i].notice)

    def exercise(self) -> None:
        o, s, t, r, e = self._pages()
        o.edit_b.setText("cat bites dog")
        o.edit_b.setText("man bites dog")
        for i in range(o.encoding.count()):
            o.encoding.setCurrentIndex(i)
        o.encoding.setCurrentIndex(0)
        for spin, values in (
            (s.n_spin, (0, 1, 1_000_000, 128)),
            (s.d_spin, (7, 0, 512, 64)),
            (s.base_spin, (0.0, -5.0, 10_000.0)),
            (t.length_spin, (0, 1500, 1024)),
            (t.rows_spin, (0, 1024)),
            (r.d_spin, (7, 64, 8)),
            (r.base_spin, (0.0, 10_000.0)),
            (e.d_spin, (9, 64, 128)),
            (e.trained_spin, (0, 40_000, 4096)),
            (e.target_spin, (0, 4096, 100_000_000, 32768)),
            (e.pair_spin, (0, 63)),
        ):
            for value in values:
                spin.setValue(value)
        for i in range(e.method_box.count()):
            e.method_box.setCurrentIndex(i)
        for slider, value in ((r.m_slider, 64), (r.n_slider, 40), (r.shift_slider, 10_000)):
            slider.setValue(value)
        super().exercise()
        t.length_spin.setValue(1500)
        r.m_slider.setValue(9)
        r.n_slider.setValue(3)
        r.shift_slider.setValue(0)
        r.finish_animation()
        self.set_step(3)

    def export(self) -> dict[str, QWidget]:
        return {
            "order-a": self.order.map_a,
            "order-b": self.order.map_b,
            "sinusoidal": self.sinusoidal.heatmap,
            "table": self.table.heatmap,
            "rope-hands": self.rope.clocks,
            "rope-score": self.rope.score_plot,
            "extension": self.extension.over_plot,
        }
