"""The models a panel's model box offers: from core's registry (the bundled MiniLM, SmolLM2,
folders opened before and the local Hugging Face cache), of the kind the panel reads."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QComboBox

from core.models.registry import known_models


def model_choices(kind: str | None, recent: Iterable[str] = ()) -> list[tuple[str, str, str]]:
    """(label, source, tooltip) of each installed, supported model of ``kind`` (None: any)."""
    choices = []
    for e in known_models(recent):
        if not e.supported or (kind is not None and e.kind != kind):
            continue
        label = {"bundled": f"{e.name} (bundled)", "cache": f"{e.key} (cache)"}.get(e.origin, e.name)
        if e.origin == "folder":
            label = Path(e.key).name
        shape = f"{e.family or e.kind}, {e.layers} layers × {e.heads} heads"
        choices.append((label, e.key, f"{shape}\n{e.path}"))
    return choices


def fill_model_box(combo: QComboBox, kind: str | None, recent: Iterable[str], current: str | None) -> None:
    """Refill ``combo`` with ``model_choices`` (item data: the source), ``current`` selected.
    The panels act on ``activated``, which only a person's choice emits."""
    combo.clear()
    for label, source, tip in model_choices(kind, recent):
        combo.addItem(label, source)
        combo.setItemData(combo.count() - 1, tip, Qt.ItemDataRole.ToolTipRole)
    combo.setCurrentIndex(max(combo.findData(current), 0))
