"""Panel "Position": attention cannot see word order until positions are encoded; sinusoidal
encodings, a learned table that runs out, RoPE's clock hands, and RoPE past the trained length."""

from __future__ import annotations

from app.panels.base import Panel
from app.panels.position.extension import ExtensionPage
from app.panels.position.learned_table import TablePage
from app.panels.position.rope_hands import RopePage
from app.panels.position.sinusoidal import SinusoidalPage
from app.panels.position.word_order import OrderPage


class PositionPanel(Panel):
    steps = (
        "Word order is invisible",
        "Sinusoidal encoding",
        "Learned table",
        "RoPE clock hands",
        "Past the trained length",
    )

    def __init__(self, parent=None):
        super().__init__(parent)
        self.order = OrderPage()
        self.sinusoidal = SinusoidalPage()
        self.table = TablePage()
        self.rope = RopePage()
        self.extension = ExtensionPage()
        self.add_steps(self.order, self.sinusoidal, self.table, self.rope, self.extension)
        self.set_step(0)

    def exercise(self) -> None:
        o, s, t, r, e = self.order, self.sinusoidal, self.table, self.rope, self.extension
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
