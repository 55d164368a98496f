import pytest

from app.widgets import LabelledSlider


def test_slider_with_choices_steps_through_them(qtbot):
    seen = []
    s = LabelledSlider("d", 1, 1024, 64, log=True, integer=True, choices=[1, 2, 4, 64, 1024])
    qtbot.addWidget(s)
    s.valueChanged.connect(seen.append)
    assert s.slider.maximum() == 4 and s.slider.value() == 3 and s.readout.text() == "64"
    s.slider.setValue(4)
    s.setValue(3)  # snaps to the nearest choice by ratio: 4
    s.setValue(5000)  # clamped to the last choice
    assert seen == [1024.0, 4.0, 1024.0] and s.readout.text() == "1024"


def test_slider_choices_must_fit_the_range():
    with pytest.raises(ValueError, match="choices"):
        LabelledSlider("d", 1, 10, 1, choices=[1, 20])
    with pytest.raises(ValueError, match="choices"):
        LabelledSlider("d", 1, 10, 1, choices=[4, 2])
