"""The Scale panel's per-step states and computations, Qt-free. Each ``compute_*`` raises
ValueError with a message for bad settings; the expensive parts that only some fields change
(a sweep over multipliers, temperatures or widths) are cached on those fields.

    compute_saturation(SaturationState("1, 2, 3", 8)).now.weights   # ≈ [0, 0, 1]
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from core.maths import scaling

MULTIPLIER_GRID = np.linspace(0.1, 16.0, 160)  # x of the winner's-gradient curve
TEMPERATURE_GRID = np.geomspace(0.05, 20.0, 121)  # x of the mean-entropy curve
GUIDE_WIDTHS = np.geomspace(1, scaling.GROWTH_WIDTHS[-1], 200)  # x of the √d_k guide beside the spread
ARTICLE_TEMPERATURES = (0.25, 0.5, 1.0, 2.0, 4.0)  # the second article's sweep
HEAD_WIDTHS = 2 ** np.arange(10)  # d_k = 1 … 512 within d_model 512
HEAD_TOKENS = 8
MAX_SEED = 2**31 - 1


# --- 1. Softmax saturation --------------------------------------------------------------------
@dataclass(frozen=True)
class SaturationState:
    scores: str = "1, 2, 3"  # as typed: numbers separated by commas
    multiplier: float = 1.0


@dataclass(frozen=True)
class SaturationResult:
    scores: tuple[float, ...]
    now: scaling.Saturation  # at the chosen multiplier
    sweep: np.ndarray  # (len(MULTIPLIER_GRID),) the winner's slope at each multiplier


@lru_cache(maxsize=8)
def _saturation_sweep(scores: tuple[float, ...]) -> np.ndarray:
    return scaling.saturation_sweep(np.array(scores), MULTIPLIER_GRID)


def compute_saturation(s: SaturationState) -> SaturationResult:
    scores = tuple(scaling.parse_scores(s.scores).tolist())
    now = scaling.saturate(np.array(scores), s.multiplier)
    return SaturationResult(scores, now, _saturation_sweep(scores))


# --- 2. Dot products grow like √d_k -----------------------------------------------------------
@dataclass(frozen=True)
class GrowthView:
    d_k: int = 64
    divide: bool = False


@dataclass(frozen=True)
class MeasureState:
    samples: int = 2000  # requested per width; capped at scaling.MAX_SAMPLES


@dataclass(frozen=True)
class Measured:
    growth: scaling.Growth
    requested: int
    warning: str | None  # why fewer samples than requested were drawn


def check_growth_view(s: GrowthView) -> GrowthView:
    if s.d_k not in scaling.GROWTH_WIDTHS:
        raise ValueError(f"Choose dₖ among {', '.join(str(w) for w in scaling.GROWTH_WIDTHS)}.")
    return s


def measure_growth(s: MeasureState, progress=None) -> Measured:
    """The spread of q·k at every width (slow for many samples: run it in the worker)."""
    samples, warning = scaling.capped_samples(s.samples)
    growth = scaling.dot_product_spread(scaling.GROWTH_WIDTHS, samples, np.random.default_rng(0), progress)
    return Measured(growth, s.samples, warning)


# --- 3. Temperature ---------------------------------------------------------------------------
@dataclass(frozen=True)
class TemperatureState:
    n_tokens: int = scaling.PRESETS[0].n_tokens
    d_k: int = scaling.PRESETS[0].d_k
    seed: int = scaling.PRESETS[0].seed
    temperature: float = 1.0


@dataclass(frozen=True)
class TemperatureResult:
    reading: scaling.TemperatureReading  # at the chosen temperature
    curve: scaling.TemperatureSweep  # mean entropy over TEMPERATURE_GRID
    article: scaling.TemperatureSweep  # at ARTICLE_TEMPERATURES
    preset: int  # index into scaling.PRESETS of these tokens, or len(PRESETS) for "Custom"


def preset_index(s: TemperatureState) -> int:
    """The preset with these tokens, width and seed, or len(PRESETS) ("Custom")."""
    same = [(p.n_tokens, p.d_k, p.seed) == (s.n_tokens, s.d_k, s.seed) for p in scaling.PRESETS]
    return same.index(True) if any(same) else len(scaling.PRESETS)


@lru_cache(maxsize=8)
def _tokens(n_tokens: int, d_k: int, seed: int):
    qkv = scaling.random_qkv(n_tokens, d_k, seed)
    return (
        qkv,
        scaling.temperature_sweep(*qkv, TEMPERATURE_GRID),
        scaling.temperature_sweep(*qkv, ARTICLE_TEMPERATURES),
    )


def compute_temperature(s: TemperatureState) -> TemperatureResult:
    qkv, curve, article = _tokens(s.n_tokens, s.d_k, s.seed)
    return TemperatureResult(scaling.read_temperature(*qkv, s.temperature), curve, article, preset_index(s))


# --- 4. d_k and the heads budget --------------------------------------------------------------
@dataclass(frozen=True)
class HeadsState:
    d_k: int = 64
    seed: int = 0


@dataclass(frozen=True)
class HeadsResult:
    comparison: scaling.ScalingComparison  # at d_k
    sweep: scaling.ReprojectionSweep  # over HEAD_WIDTHS
    d_model: int


@lru_cache(maxsize=8)
def _projection(seed: int):
    proj = scaling.random_projection(HEAD_TOKENS, seed)
    return proj, scaling.reprojection_sweep(proj, HEAD_WIDTHS)


def compute_heads(s: HeadsState) -> HeadsResult:
    proj, sweep = _projection(s.seed)
    return HeadsResult(scaling.compare_scaling(proj, s.d_k), sweep, proj.X.shape[1])
