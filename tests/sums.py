"""Parts that add up to a whole, compared with a tolerance scaled by the sizes of what is summed.

A whole the model computes in float32 carries rounding of the order of float32's epsilon times the
magnitudes that went into it, not times the whole: parts that nearly cancel leave a small whole
with an error far above its own 1e-5. Another CPU takes another kernel path and rounds otherwise,
so a tolerance taken from the result passes on one machine and fails on the next."""

import numpy as np

RELATIVE = 1e-5  # about 80 float32 epsilons of the magnitudes summed


def assert_adds_up(parts, whole, axis: int = 0, rel: float = RELATIVE) -> None:
    """``parts`` summed over ``axis`` equal ``whole`` within ``rel`` times Σ|parts| + |whole|."""
    parts = np.asarray(parts, dtype=np.float64)
    whole = np.asarray(whole, dtype=np.float64)
    total = parts.sum(axis=axis)
    scale = np.abs(parts).sum(axis=axis) + np.abs(whole)
    off = np.abs(total - whole)
    assert (off <= rel * scale).all(), (
        f"parts sum to {total}, the whole is {whole}: off by {off}, allowed {rel * scale}"
    )
