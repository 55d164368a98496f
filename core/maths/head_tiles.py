"""Every head's weights shrunk to small tiles, so a whole model fits one picture.

A long text's (n, m) map becomes at most ``TILE`` × ``TILE`` block means: each tile pixel is the
mean of the weights of one block of consecutive rows and columns. Shorter maps stay as they are.

    tiles = head_tiles(attention.attentions)  # (layers, heads, 496, 496) -> (layers, heads, 64, 64)
    tiles.reduced  # True: the tiles show block means
    picture = tiles.mosaic()  # every tile in one image, rows = layers, columns = heads
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

TILE = 64  # the most pixels a side of one tile


@dataclass(frozen=True)
class HeadTiles:
    """Tiles ready to draw: ``maps`` (rows, cols, n', m') float32, n' = min(n, size)."""

    maps: np.ndarray
    reduced: bool  # True when a side was longer than the tile: pixels are block means

    @property
    def gap(self) -> int:
        """Empty pixels between two tiles of the mosaic: a twelfth of a tile's side, at least 1."""
        return max(1, max(self.maps.shape[2:]) // 12)

    def mosaic(self) -> np.ndarray:
        """Every tile in one picture, (rows·(n'+gap)−gap, cols·(m'+gap)−gap) float32, NaN in the
        gaps: tile (r, c) starts at row r·(n'+gap), column c·(m'+gap)."""
        r, c, n, m = self.maps.shape
        gap = self.gap
        out = np.full((r, n + gap, c, m + gap), np.nan, dtype=np.float32)
        out[:, :n, :, :m] = self.maps.transpose(0, 2, 1, 3)
        return out.reshape(r * (n + gap), c * (m + gap))[: r * (n + gap) - gap, : c * (m + gap) - gap]


def block_starts(n: int, size: int) -> np.ndarray:
    """(size,) first index of each of ``size`` blocks of nearly equal length covering 0…n−1."""
    return np.arange(size) * n // size


def block_means(maps: np.ndarray, size: int) -> np.ndarray:
    """(…, n, m) -> (…, min(n, size), min(m, size)): the mean of each block of rows and columns.

    A side no longer than ``size`` is kept; a longer one is cut into ``size`` blocks of ⌊n/size⌋ or
    ⌈n/size⌉ consecutive entries (block_starts).
    """
    for axis in (-2, -1):
        n = maps.shape[axis]
        if n > size:
            starts = block_starts(n, size)
            counts = np.diff(np.append(starts, n))
            shape = [1] * maps.ndim
            shape[axis] = size
            maps = np.add.reduceat(maps, starts, axis=axis) / counts.reshape(shape)
    return maps


def head_tiles(maps: np.ndarray, size: int = TILE) -> HeadTiles:
    """(rows, cols, n, m) weights -> HeadTiles of at most ``size`` × ``size`` block means each."""
    maps = np.asarray(maps)
    if maps.ndim != 4:
        raise ValueError(f"Head tiles need (rows, cols, n, m) maps, got shape {maps.shape}.")
    reduced = max(maps.shape[2:]) > size
    return HeadTiles(block_means(maps, size).astype(np.float32, copy=False), reduced)
