"""Binding: the one link between a control and a field of a Live's state.

``bind(control, live, field)``: the control writes the field when the user changes it
(``live.apply(field=value)``), and every accepted change of the state writes the field back into
the control with its signals blocked (``set_quietly``: no recompute).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from PySide6.QtWidgets import (
    QAbstractButton,
    QComboBox,
    QDoubleSpinBox,
    QLineEdit,
    QSlider,
    QSpinBox,
    QWidget,
)

from app.widgets.quiet import quiet
from app.widgets.sliders import LabelledSlider
from app.widgets.text import TextBox


def value_of(control: QWidget):
    """What ``control`` shows: a number, text, a combo box's item data (its text when it has
    none) or a check state."""
    if isinstance(control, (LabelledSlider, QSpinBox, QDoubleSpinBox, QSlider)):
        return control.value()
    if isinstance(control, (QLineEdit, TextBox)):
        return control.text()
    if isinstance(control, QComboBox):
        data = control.currentData()
        return control.currentText() if data is None else data
    if isinstance(control, QAbstractButton):
        return control.isChecked()
    raise TypeError(f"{type(control).__name__} is not a control that holds a value")


def set_quietly(control: QWidget, value, choices: Sequence[str] | None = None) -> None:
    """Show ``value`` in ``control`` without emitting its change signal (no recompute); a
    control that already shows it is left alone (a text box keeps its cursor). ``choices``: the
    items a combo box offers, put in its list first where they differ."""
    offered = choices is not None and [control.itemText(k) for k in range(control.count())] != list(choices)
    if not offered and value_of(control) == value:
        return
    with quiet(control):
        if offered:
            control.clear()
            control.addItems(list(choices))
        if isinstance(control, (QLineEdit, TextBox)):
            control.setText(value)
        elif isinstance(control, QComboBox):
            index = control.findData(value)
            control.setCurrentIndex(index if index >= 0 else control.findText(str(value)))
        elif isinstance(control, QAbstractButton):
            control.setChecked(bool(value))
        else:
            control.setValue(value)


def changed_signal(control: QWidget):
    """The signal a control emits when the user changes its value."""
    if isinstance(control, (QLineEdit, TextBox)):
        return control.textChanged
    if isinstance(control, QComboBox):
        return control.currentIndexChanged
    if isinstance(control, QAbstractButton):
        return control.toggled
    return control.valueChanged


def bind(control: QWidget, live, field: str, convert: Callable = lambda v: v) -> QWidget:
    """Tie ``control`` to ``field`` of ``live.state`` both ways; ``convert`` turns what the control
    shows into the field's value (e.g. ``int`` for a slider's float). Returns ``control``."""
    changed_signal(control).connect(lambda *_: live.apply(**{field: convert(value_of(control))}))
    live.changed.connect(lambda: set_quietly(control, getattr(live.state, field)))
    return control
