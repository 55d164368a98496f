"""Headless computations behind every Attention Lab panel: no Qt; torch only for real models.

Each module is pure and deterministic given an ``np.random.Generator``; arrays are float64
unless a docstring says otherwise.

To use it from Python or Jupyter, see docs/notebook.md. The public names are those it shows,
listed in each module's or package's ``__all__``; the rest is the app's own and may change.
"""

__version__ = "0.1.0"
