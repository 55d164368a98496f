"""The step machinery every panel is built from: Live (state → result, refusals keep the old
state), Step (the visible step redraws, hidden ones when next shown) and bind (both ways, quietly)."""

from dataclasses import dataclass

import pytest
from PySide6.QtWidgets import QCheckBox, QComboBox, QLineEdit, QSpinBox, QStackedWidget

from app.panels.binding import bind, set_quietly
from app.panels.step import Live, Step
from app.widgets import LabelledSlider
from tests.app.conftest import idle


@dataclass(frozen=True)
class Square:
    x: int = 3
    label: str = "a"


def square(s: Square, progress=None) -> int:
    if s.x < 0:
        raise ValueError("Choose x ≥ 0.")
    return s.x * s.x


class Shows(Step):
    def __init__(self, live):
        super().__init__(live)
        self.drawn = []

    def draw(self, result):
        self.drawn.append(result)
        return ("big", "info") if result > 100 else None


def test_live_refuses_bad_changes_and_keeps_the_state(qtbot):
    live = Live(Square(), square)
    refused, changed = [], []
    live.failed.connect(refused.append)
    live.changed.connect(lambda: changed.append(live.result))
    assert live.apply(x=-1) is False and refused == ["Choose x ≥ 0."]
    assert live.state == Square() and live.result == 9 and changed == []
    assert live.apply(x=4) and live.state.x == 4 and changed == [16]
    with pytest.raises(TypeError):
        live.apply(y=1)  # no such field: a bug, not bad input


def test_a_refused_value_stays_wanted_and_the_next_change_builds_on_it(qtbot):
    @dataclass(frozen=True)
    class Split:
        width: int = 512
        heads: int = 1

    def check(s: Split) -> int:
        if s.width % s.heads:
            raise ValueError(f"{s.width} is not divisible by {s.heads} heads.")
        return s.width // s.heads

    live = Live(Split(), check)
    assert live.apply(heads=3) is False and live.state == Split() and live.wanted == Split(512, 3)
    assert live.apply(width=510) and live.state == Split(510, 3) and live.result == 170


def test_only_the_current_step_draws_the_others_when_shown(qtbot):
    live = Live(Square(), square)
    stack = QStackedWidget()
    qtbot.addWidget(stack)
    first, second = Shows(live), Shows(live)
    stack.addWidget(first)
    stack.addWidget(second)
    live.apply(x=5)
    assert first.drawn == [25] and second.drawn == [] and second.stale
    live.apply(x=11)
    live.apply(x=12)
    stack.setCurrentWidget(second)
    second.refresh()
    assert second.drawn == [144] and second.notice == ("big", "info")
    second.refresh()
    assert second.drawn == [144]  # nothing new: no second draw


def test_bind_writes_the_field_and_shows_changes_without_signals(qtbot):
    @dataclass(frozen=True)
    class Form:
        n: int = 2
        text: str = "hi"
        kind: str = "b"
        on: bool = False
        level: int = 5

    live = Live(Form(), lambda s: s)
    box, edit, combo, tick = QSpinBox(), QLineEdit("hi"), QComboBox(), QCheckBox()
    slider = LabelledSlider("level", 0, 10, 5, integer=True)
    box.setValue(2)
    combo.addItem("A", "a")
    combo.addItem("B", "b")
    combo.setCurrentIndex(1)
    for control, field in ((box, "n"), (edit, "text"), (combo, "kind"), (tick, "on")):
        bind(control, live, field)
    bind(slider, live, "level", int)
    box.setValue(7)
    edit.setText("ho")
    combo.setCurrentIndex(0)
    tick.setChecked(True)
    slider.setValue(9)
    assert live.state == Form(7, "ho", "a", True, 9)
    emitted = []
    box.valueChanged.connect(emitted.append)
    live.apply(n=3, kind="b", level=1)  # a change from elsewhere shows in every control, quietly
    assert (box.value(), combo.currentData(), slider.value()) == (3, "b", 1.0) and emitted == []


def test_set_quietly_leaves_a_control_showing_the_value_alone(qtbot):
    edit = QLineEdit("the cat")
    edit.setCursorPosition(3)
    set_quietly(edit, "the cat")
    assert edit.cursorPosition() == 3


def test_background_live_keeps_only_the_newest_request(qtbot):
    live = Live(Square(), square, background=True)
    idle()
    assert live.result == 9
    for x in (1, 2, 5):
        live.apply(x=x)
    idle()
    assert live.state.x == 5 and live.result == 25
    refused = []
    live.failed.connect(refused.append)
    live.apply(x=-2)
    idle()
    assert refused == ["Choose x ≥ 0."] and live.state.x == 5


@pytest.mark.parametrize("panel", ["position"], indirect=True)
def test_a_refused_change_reaches_the_message_bar_and_the_next_good_one_clears_it(panel):
    panel.sinusoidal.d_spin.setValue(7)
    assert panel.message.level == "error" and "pairs" in panel.message.text()
    panel.sinusoidal.d_spin.setValue(32)
    assert not panel.message.isVisibleTo(panel)
    assert panel.sinusoidal.stale  # hidden: drawn when shown
    panel.set_step(1)
    assert panel.sinusoidal.heatmap.values.shape[1] == 32 and not panel.sinusoidal.stale


def test_only_the_step_on_screen_sets_the_panels_least_size(qtbot):
    from PySide6.QtWidgets import QLabel, QVBoxLayout

    from app.panels.base import Panel

    class Wide(Shows):
        def __init__(self, live, width):
            super().__init__(live)
            box = QLabel("wide")
            box.setMinimumSize(width, width // 2)
            QVBoxLayout(self).addWidget(box)

    class TwoSteps(Panel):
        key, title, steps = "two", "Two steps", ("Narrow", "Wide")

        def __init__(self):
            super().__init__()
            live = Live(Square(), square)
            self.add_steps(Wide(live, 100), Wide(live, 2000))
            self.set_step(0)

    panel = TwoSteps()
    qtbot.addWidget(panel)
    panel.show()
    narrow = panel.minimumSizeHint()
    assert narrow.width() < 1000 and narrow.height() < 500  # the hidden page does not count
    panel.set_step(1)
    assert panel.minimumSizeHint().width() >= 2000 and panel.minimumSizeHint().height() >= 1000
    panel.set_step(0)
    assert panel.minimumSizeHint() == narrow
