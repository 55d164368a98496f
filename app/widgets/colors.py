"""Colormaps and value formatting shared by the matrix widgets.

Sequential values (weights in 0…1) use viridis; signed values use a blue–white–red diverging map
centred on 0. Both stay readable for the common forms of colour blindness.
"""

from __future__ import annotations

import numpy as np
import pyqtgraph as pg

SEQUENTIAL = "viridis"
DIVERGING = "CET-D1"


def colormap(signed: bool) -> pg.ColorMap:
    return pg.colormap.get(DIVERGING if signed else SEQUENTIAL)


def default_levels(values: np.ndarray, signed: bool) -> tuple[float, float]:
    """Colour range for ``values``: symmetric around 0 when signed, else [min, max] (0…1 at least)."""
    finite = values[np.isfinite(values)]
    if signed:
        top = float(np.abs(finite).max()) if finite.size else 1.0
        top = top if top > 0 else 1.0
        return -top, top
    if finite.size == 0:
        return 0.0, 1.0
    return min(0.0, float(finite.min())), max(1.0, float(finite.max()))
