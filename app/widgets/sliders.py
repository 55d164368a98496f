"""A slider with a name and a live value readout, on a linear or logarithmic scale,
or stepping through a fixed list of values (``choices``, e.g. the powers of two)."""

from __future__ import annotations

import math
import re
from collections.abc import Sequence

from PySide6.QtCore import QEvent, Qt, Signal
from PySide6.QtWidgets import QHBoxLayout, QLabel, QSlider, QWidget

from app.widgets.quiet import quiet

STEPS = 1000  # slider resolution for float and log scales


class LabelledSlider(QWidget):
    """``valueChanged(float)`` fires with the value on the chosen scale.

    integer=True gives whole numbers (one slider step each on a linear scale).
    choices: the only values the slider can take, one slider step each, in increasing order.
    """

    valueChanged = Signal(float)

    def __init__(
        self,
        label: str,
        minimum: float,
        maximum: float,
        value: float,
        log: bool = False,
        integer: bool = False,
        decimals: int = 2,
        choices: Sequence[float] | None = None,
        parent=None,
    ):
        super().__init__(parent)
        if not minimum < maximum or (log and minimum <= 0):
            raise ValueError(f"Bad slider range {minimum} … {maximum}.")
        self.minimum, self.maximum, self.log = minimum, maximum, log
        self.integer, self.decimals = integer, decimals
        self.choices = None if choices is None else [float(c) for c in choices]
        if self.choices is not None and (
            not self.choices
            or self.choices != sorted(set(self.choices))
            or not minimum <= self.choices[0] <= self.choices[-1] <= maximum
        ):
            raise ValueError(f"Slider choices must increase within {minimum} … {maximum}.")
        self.name = QLabel(label)
        self.slider = QSlider(Qt.Orientation.Horizontal)
        if self.choices is not None:
            self.slider.setRange(0, len(self.choices) - 1)
        else:
            self.slider.setRange(0, int(maximum - minimum) if integer and not log else STEPS)
        self.readout = QLabel()
        self._fit_readout()
        self.readout.setAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
        row = QHBoxLayout(self)
        row.setContentsMargins(0, 0, 0, 0)
        row.addWidget(self.name)
        row.addWidget(self.slider, 1)
        row.addWidget(self.readout)
        self.slider.valueChanged.connect(self._on_slider)
        self.setValue(value)

    def _to_value(self, position: int) -> float:
        if self.choices is not None:
            return self.choices[position]
        frac = position / self.slider.maximum()
        if self.log:
            v = self.minimum * (self.maximum / self.minimum) ** frac
        else:
            v = self.minimum + frac * (self.maximum - self.minimum)
        return float(round(v)) if self.integer else v

    def _to_position(self, value: float) -> int:
        value = min(max(value, self.minimum), self.maximum)
        if self.choices is not None:
            return self.choices.index(self._snap(value))
        if self.log:
            frac = math.log(value / self.minimum) / math.log(self.maximum / self.minimum)
        else:
            frac = (value - self.minimum) / (self.maximum - self.minimum)
        return round(frac * self.slider.maximum())

    def value(self) -> float:
        return self._value

    def setValue(self, value: float) -> None:
        """Move to ``value`` (clamped to the range); emits valueChanged when it changes."""
        value = self._snap(min(max(float(value), self.minimum), self.maximum))
        self._value = float(round(value)) if self.integer else value
        self._show_value()
        with quiet(self.slider):
            self.slider.setValue(self._to_position(self._value))
        self.valueChanged.emit(self._value)

    def set_maximum(self, maximum: float) -> None:
        """A new top of the range (above the minimum), the value kept where it fits, quietly."""
        if maximum == self.maximum or maximum <= self.minimum:
            return
        self.maximum = maximum
        self._fit_readout()
        with quiet(self.slider):
            self.slider.setValue(self._to_position(self._value))

    def _snap(self, value: float) -> float:
        """The nearest choice to ``value`` (nearest in ratio on a log scale); ``value`` without choices."""
        if self.choices is None:
            return value
        if self.log:
            return min(self.choices, key=lambda c: abs(math.log(c / value)))
        return min(self.choices, key=lambda c: abs(c - value))

    def _fit_readout(self) -> None:
        """Room for the longest value the slider shows, at the current text size (the readout takes
        this widget's font): the ends of its range, every digit as wide as a 0."""
        ends = [re.sub(r"\d", "0", self._text(v)) for v in (self.minimum, self.maximum)]
        self.readout.setMinimumWidth(max(self.fontMetrics().horizontalAdvance(text) for text in ends))

    def changeEvent(self, event) -> None:
        super().changeEvent(event)
        if event.type() == QEvent.Type.FontChange:
            self._fit_readout()

    def _on_slider(self, position: int) -> None:
        self._value = self._to_value(position)
        self._show_value()
        self.valueChanged.emit(self._value)

    def _show_value(self) -> None:
        self.readout.setText(self._text(self._value))

    def _text(self, v: float) -> str:
        return f"{int(v)}" if self.integer else f"{v:.{self.decimals}f}"
