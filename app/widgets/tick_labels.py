"""Which tick labels a heatmap's axes can show without overlapping: every stride-th cell, or the
columns that matter first and then as many others as fit."""

from __future__ import annotations

import bisect
from collections.abc import Sequence

import numpy as np


def stride(count: int, pixels: float, needed: float) -> int:
    """Label every stride-th of ``count`` cells spread over ``pixels`` so labels need ``needed`` each."""
    if count == 0 or pixels <= 0:
        return 1
    return max(1, int(np.ceil(needed * count / pixels)))


def label_stride(widths: np.ndarray, pixels: float, gap: float) -> int:
    """The least stride at which labels of these ``widths``, centred on cells spread over
    ``pixels``, keep ``gap`` between neighbours: a long label beside short ones still lets
    every cell be labelled when the two halves fit (the widest alone would ask for more)."""
    count = len(widths)
    if count == 0 or pixels <= 0:
        return 1
    cell, most = pixels / count, stride(count, pixels, widths.max() + gap)  # the widest everywhere: fits
    for step in range(1, most):
        kept = widths[::step]
        if np.all((kept[:-1] + kept[1:]) / 2 + gap <= step * cell):
            return step
    return most


def fitting_labels(
    labels: Sequence[str],
    widths: np.ndarray,
    centres: np.ndarray,
    room: tuple[float, float],
    gap: float,
    first: dict[int, tuple[str, float]],
    most: int,
) -> tuple[tuple[int, str], ...]:
    """(column, label) of the columns to label, left to right: those of ``first`` (column ->
    its short label and that label's pixels), all by their short labels, then each by its whole
    label in ``first``'s order where that fits too; then every other column from the left by its
    label. A label is kept only if it stays within ``room`` and ``gap`` pixels from every label
    kept before it; at most ``most``. ``labels`` are ``widths`` pixels wide, centred on
    ``centres``."""
    kept: list[int] = []  # sorted by position
    texts: dict[int, tuple[str, float]] = {}

    def fits(k: int, width: float) -> bool:
        half = width / 2
        if centres[k] - half < room[0] or centres[k] + half > room[1]:
            return False
        at = bisect.bisect(kept, k)
        near = kept[max(at - 1, 0) : at + 1]
        return all(abs(centres[k] - centres[j]) >= half + texts[j][1] / 2 + gap for j in near)

    def keep(k: int, text: str, width: float) -> bool:
        if len(kept) >= most or not fits(k, width):
            return False
        bisect.insort(kept, k)
        texts[k] = (text, width)
        return True

    for k, short in first.items():  # every key column labelled, if only by its number
        keep(k, *short)
    for k, short in first.items():  # then by its whole label where that fits
        if k in texts:
            kept.remove(k)
            del texts[k]
        keep(k, labels[k], widths[k]) or keep(k, *short)
    for k in range(len(labels)):
        if k not in texts:
            keep(k, labels[k], widths[k])
    return tuple((k, texts[k][0]) for k in kept)
