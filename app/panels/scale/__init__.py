"""Panel "Scale and temperature": why scores are divided by √dₖ, and how soft the soft lookup is.

Four independent steps, each over its own state (``state.py``): softmax saturation, the growth of
q·k with dₖ (measured in the background), temperature, and dₖ within the heads budget.
"""

from __future__ import annotations

from app.panels.base import Panel
from app.panels.scale.growth import GrowthPage
from app.panels.scale.heads import HeadsPage
from app.panels.scale.saturation import SaturationPage
from app.panels.scale.temperature import TemperaturePage


class ScalePanel(Panel):
    steps = ("Softmax saturation", "Dot products grow like √dₖ", "Temperature", "dₖ and the heads budget")

    def __init__(self, parent=None):
        super().__init__(parent)
        self.saturation = SaturationPage()
        self.growth = GrowthPage()
        self.temperature = TemperaturePage()
        self.heads = HeadsPage()
        self.add_steps(self.saturation, self.growth, self.temperature, self.heads)
        self.set_step(0)

    def exercise(self) -> None:
        sat, growth, temp, heads = self.saturation, self.growth, self.temperature, self.heads
        self.set_step(0)
        for text in ("1, two, 3", "", "1e308, 2", "1, 2, 3"):
            sat.scores_edit.setText(text)
        for m in (16, 0, 8):
            sat.multiplier_slider.setValue(m)
        sat.scores_edit.setText("1, 2, 3, 0.5")
        sat.scores_edit.setText("1, 2, 3")
        self.set_step(1)
        for samples in (0, 10**8, 2000):
            growth.samples_spin.setValue(samples)
        growth.divide_box.setChecked(True)
        for d_k in (1, 1024):
            growth.growth_slider.setValue(d_k)
        growth.divide_box.setChecked(False)
        growth.growth_slider.setValue(512)
        self.set_step(2)
        temp.d_k_spin.setValue(0)
        temp.d_k_spin.setValue(8)
        temp.tokens_spin.setValue(16)
        temp.preset_combo.setCurrentIndex(1)
        temp.preset_combo.setCurrentIndex(0)
        for t in (0.05, 20.0, 0.5):
            temp.temperature_slider.setValue(t)
        self.set_step(3)
        for d_k in (1, 512, 64):
            heads.head_slider.setValue(d_k)
        heads.head_seed_spin.setValue(3)
        heads.head_seed_spin.setValue(0)
        super().exercise()
