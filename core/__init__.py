"""Headless computations behind every Attention Lab panel: numpy only, no Qt.

Each module is pure and deterministic given an ``np.random.Generator``; arrays are float64
unless a docstring says otherwise.
"""

__version__ = "0.1.0"
