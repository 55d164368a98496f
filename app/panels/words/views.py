"""What the Which words mattered steps share: a strip of the prompt's tokens coloured by one
method's scores, its value written in each cell."""

from __future__ import annotations

import numpy as np

from app.panels.step import Notice
from app.widgets import Heatmap


def strip(title: str, signed: bool = False) -> Heatmap:
    """One row of cells, one per token (several rows: one per method, the rows named)."""
    return Heatmap(title, signed=signed, colorbar=False, cols="token")


def show(view: Heatmap, rows: dict[str, np.ndarray], labels: tuple[str, ...], signed: bool = False) -> None:
    """``rows`` (name → (T,) scores) in ``view``, one colour scale: 0 to 1, or ± the largest size."""
    values = np.vstack(list(rows.values()))
    reach = float(np.abs(values).max()) or 1.0
    view.set_data(values, list(rows), list(labels), (-reach, reach) if signed else (0.0, max(1.0, reach)))


def told(notices: tuple[str, ...]) -> Notice:
    """The result's notices for the message bar, or None."""
    return (" ".join(notices), "warning") if notices else None
