"""core.maths.head_tiles: block means of every head, checked against a plain loop over the blocks."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from core.maths.head_tiles import TILE, block_means, block_starts, head_tiles


def reference(maps: np.ndarray, size: int) -> np.ndarray:
    """Block (a, b) of each map averaged cell by cell; block a spans rows a·n//size … (a+1)·n//size."""
    *lead, n, m = maps.shape
    rows = (
        [(a * n // size, (a + 1) * n // size) for a in range(size)]
        if n > size
        else [(i, i + 1) for i in range(n)]
    )
    cols = (
        [(b * m // size, (b + 1) * m // size) for b in range(size)]
        if m > size
        else [(j, j + 1) for j in range(m)]
    )
    out = np.zeros((*lead, len(rows), len(cols)))
    for index in np.ndindex(*lead):
        for a, (r0, r1) in enumerate(rows):
            for b, (c0, c1) in enumerate(cols):
                cells = [maps[index][i, j] for i in range(r0, r1) for j in range(c0, c1)]
                out[index][a, b] = sum(float(x) for x in cells) / len(cells)
    return out


@settings(max_examples=60, deadline=None)
@given(
    lead=st.tuples(st.integers(1, 2), st.integers(1, 3)),
    n=st.integers(1, 30),
    m=st.integers(1, 30),
    size=st.integers(1, 9),
    seed=st.integers(0, 2**16),
)
def test_block_means_match_a_plain_loop(lead, n, m, size, seed):
    maps = np.random.default_rng(seed).random((*lead, n, m), dtype=np.float32)
    # block_means sums in float32 with reduceat, rows then columns: up to 30 positive terms each
    # time, so about 60 roundings of at most 6e-8 relative each (4e-6 in all).
    np.testing.assert_allclose(block_means(maps, size), reference(maps, size), rtol=1e-5, atol=0)


@pytest.mark.parametrize("n", [65, 100, 496, 512, 4096])
def test_blocks_cover_every_token_in_nearly_equal_parts(n):
    starts = block_starts(n, TILE)
    counts = np.diff(np.append(starts, n))
    assert starts[0] == 0 and counts.sum() == n and set(counts) <= {n // TILE, -(-n // TILE)}


def test_a_long_text_is_reduced_and_rows_still_sum_to_one():
    rng = np.random.default_rng(0)
    weights = rng.random((2, 3, 496, 496))
    weights /= weights.sum(-1, keepdims=True)  # attention rows sum to 1
    tiles = head_tiles(weights.astype(np.float32))
    assert tiles.reduced and tiles.maps.shape == (2, 3, TILE, TILE) and tiles.maps.dtype == np.float32
    # a cell is a mean over a block of columns: weighted by the blocks' widths, a tile row sums to 1
    counts = np.diff(np.append(block_starts(496, TILE), 496))
    np.testing.assert_allclose((tiles.maps * counts).sum(-1), 1.0, rtol=1e-5)


def test_a_short_text_is_drawn_as_it_is():
    weights = np.random.default_rng(1).random((6, 12, 17, 17), dtype=np.float32)
    tiles = head_tiles(weights)
    assert not tiles.reduced
    np.testing.assert_array_equal(tiles.maps, weights)


def test_maps_without_layers_and_heads_are_refused():
    with pytest.raises(ValueError, match="rows, cols, n, m"):
        head_tiles(np.zeros((12, 17, 17)))


def test_the_mosaic_places_every_tile_with_nan_gaps():
    weights = np.random.default_rng(2).random((2, 3, 30, 26), dtype=np.float32)
    tiles = head_tiles(weights)
    picture, gap = tiles.mosaic(), tiles.gap
    assert gap == 2 and picture.shape == (2 * 32 - 2, 3 * 28 - 2)
    for layer, head in np.ndindex(2, 3):
        top, left = layer * 32, head * 28
        np.testing.assert_array_equal(picture[top : top + 30, left : left + 26], weights[layer, head])
    assert np.isnan(picture[30:32]).all() and np.isnan(picture[:, 26:28]).all()
