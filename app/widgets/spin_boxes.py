"""Number boxes for the control columns."""

from __future__ import annotations

from PySide6.QtWidgets import QDoubleSpinBox, QSpinBox


def spin(value: int, minimum: int, maximum: int, step: int = 1, tracking: bool = False) -> QSpinBox:
    """A whole-number box with thousands separators. Without ``tracking`` it reports once the
    typing is done, not at every digit."""
    box = QSpinBox()
    box.setRange(minimum, maximum)
    box.setSingleStep(step)
    box.setGroupSeparatorShown(True)
    box.setKeyboardTracking(tracking)
    box.setValue(value)
    return box


def float_spin(
    value: float, minimum: float, maximum: float, decimals: int = 1, step: float = 1.0
) -> QDoubleSpinBox:
    """A number box; give it a wide range when the panel should explain why a value is bad."""
    box = QDoubleSpinBox()
    box.setRange(minimum, maximum)
    box.setDecimals(decimals)
    box.setSingleStep(step)
    box.setKeyboardTracking(False)
    box.setValue(value)
    return box
