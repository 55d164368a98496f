"""Numbers as text: a labelled table, as the exported scripts and the commands print them.

>>> print(table([[0.5, 0.25], [1.0, 0.0]], ["the", "cat"], ["the", "cat"]))
     the   cat
the  0.5  0.25
cat    1     0
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

__all__ = ["counted", "size_text", "table"]

UNITS = ("B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB")


def table(
    values,
    rows: Sequence[str] | None = None,
    cols: Sequence[str] | None = None,
    number: str = "{:.6g}",
) -> str:
    """``values`` (n,) or (n, m) as right-aligned columns, with row and column labels when given.

    ``number`` formats each value (six significant digits by default: what a test can check)."""
    grid = np.asarray(values, dtype=float)
    if grid.ndim == 1:
        grid = grid[:, None]
    if grid.ndim != 2:
        raise ValueError(f"a table needs 1 or 2 dimensions, not {grid.ndim}")
    cells = [[number.format(v) for v in row] for row in grid]
    header = [str(c) for c in cols] if cols is not None else None
    labels = [str(r) for r in rows] if rows is not None else None
    widths = [
        max(len(c) for c in column) for column in zip(*cells, *([header] if header else []), strict=True)
    ]
    left = max((len(label) for label in labels), default=0) if labels else 0
    lines = []
    if header:
        lines.append(" " * left + "".join(f"  {c:>{w}}" for c, w in zip(header, widths, strict=True)))
    for k, row in enumerate(cells):
        label = f"{labels[k]:<{left}}" if labels else ""
        lines.append(label + "".join(f"  {c:>{w}}" for c, w in zip(row, widths, strict=True)))
    return "\n".join(lines)


def counted(n: int, noun: str) -> str:
    """``n`` and ``noun``, plural unless n is 1: "1 key/value head", "3 key/value heads"."""
    return f"{n:,} {noun}{'' if n == 1 else 's'}"


def size_text(n_bytes: float) -> str:
    """Bytes in binary units with three significant digits: 67108864 → "64 MiB"."""
    value, unit = float(n_bytes), 0
    while value >= 1024 and unit < len(UNITS) - 1:
        value, unit = value / 1024, unit + 1
    return f"{value:.3g} {UNITS[unit]}"
