"""The attention benchmark: time, throughput, memory and error of each implementation vs n.

A sweep is a ``BenchConfig`` (implementations × sequence lengths at one batch, heads, head_dim,
dtype, causal setting and device). ``run_benchmark`` runs its points in order (n outer,
implementation inner) and returns a ``BenchReport``. Per point:

- memory gating first: the bytes the point needs are estimated and compared with free memory;
  a point that would not fit is skipped with "skipped: would need X GB, Y GB free";
- time gating next: a point is predicted from the last length (or, for an implementation's first
  point, from one call on fewer tokens) and skipped when the whole point would pass the time
  limit or one call, which Cancel cannot interrupt, the call limit;
- median wall time over repeats after warm-up (the GPU is synchronised around each call); the
  warm-up lasts at least ``warmup_s`` and until the calls have settled, since the first calls
  after another implementation can stall for tens of milliseconds each (its worker threads are
  still spinning; the first point read 64 ms where the next length took 9 ms);
- the spread of the timed calls (interquartile range over the median): past NOISY_SPREAD the
  point was disturbed while it ran (``noisy``), and ``fit_slopes`` fits no time slope through it
  (``withheld_slopes`` says why);
- TFLOP/s by the FlashAttention benchmark count 4·B·H·n²·d (halved when causal; for a sliding
  window, 4·B·H·d times the number of cells the window allows);
- peak memory the call allocates beyond its inputs (see ``core.bench.device.measure_peak``);
- max abs error against a float64 reference on a few query rows of two heads.

The GUI panel and the command line both call ``run_benchmark``.
"""

from __future__ import annotations

import csv
import io
import json
import math
import statistics
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field, fields, replace
from functools import partial
from typing import Any

import numpy as np

from core.bench.device import (
    DeviceInfo,
    check_cuda,
    cuda_available,
    describe_device,
    free_bytes,
    measure_peak,
    settle_heap,
    synchronize,
)
from core.bench.runners import (
    IMPLEMENTATIONS,
    ITEMSIZE,
    Implementation,
    Problem,
    Refused,
    linear_flops,
    missing_on,
    window_allows,
)
from core.maths.attention import attend
from core.maths.linear import elu_plus_one

DEVICES = ("cpu", "cuda")
DTYPES = ("fp32", "fp16", "bf16", "fp64")
BASELINES = ("torch-naive", "numpy-naive")  # "naive" in the summary: the first one that ran
MIN_REPEATS = 3
CHECK_ROWS = 32  # query rows per checked head for the error against float64
MEANINGFUL_SLOPE_LENGTHS = 3  # a slope fitted from two lengths swings from run to run
PROBE_TOKENS = 16  # the size runnable_impls tries each implementation at
MEMORY_HEADROOM = 0.9  # a point may use at most this share of the free memory
CALIBRATION_FLOPS = 1e9  # an implementation's first point above this is predicted from a shorter call
# A point whose timed calls' middle half (quartile to quartile) spans more than this share of
# their median was disturbed while it ran (another program, a stall): its median is noise, and
# no slope is fitted through it. Settled points spread a few per cent.
NOISY_SPREAD = 0.5
ONE_CALL = "was timed in one call"  # how withheld_slopes says that a point's spread is unknown
SETTLED = 2.0  # warm-up goes on (up to WARMUP_CAP × warmup_s) while a call is this much slower than the best
WARMUP_CAP = 5
TICK_EVERY_S = 0.02  # warm-up calls report progress (the chance to cancel) at most this often

Progress = Callable[[int, int], None]


def available_impls(device: str) -> tuple[str, ...]:
    """Implementations that exist on ``device`` in this installation, in display order."""
    return tuple(key for key in IMPLEMENTATIONS if missing_on(key, device) is None)


def runnable_impls(
    device: str, dtype: str, head_dim: int = 64, causal: bool = False
) -> dict[str, str | None]:
    """Each implementation available on ``device``: None if it accepts ``dtype``, ``head_dim`` and
    ``causal``, else why not. Each is tried on a PROBE_TOKENS-token problem, except those that
    compile (trying is the slow part): they count as accepted. Imports torch when installed.
    """
    q, k, v = np.random.default_rng(0).standard_normal((3, 1, 1, PROBE_TOKENS, head_dim), dtype=np.float32)
    verdicts: dict[str, str | None] = {}
    for key in available_impls(device):
        impl = IMPLEMENTATIONS[key]
        verdicts[key] = None
        if not impl.compiles:
            window = PROBE_TOKENS if impl.windowed else None
            try:
                impl.prepare(Problem(q, k, v, dtype, device, causal, window, impl.linear))
            except Refused as refusal:
                verdicts[key] = str(refusal)
    return verdicts


def implementation_choices() -> dict[str, dict[str, str | None]]:
    """For each usable device, every implementation with None (available) or why it is not.

    Imports torch when it is installed (slow the first time: call it off the UI thread).
    """
    devices = ("cpu", "cuda") if cuda_available() else ("cpu",)
    return {device: {key: missing_on(key, device) for key in IMPLEMENTATIONS} for device in devices}


def _whole(name: str, value: Any, minimum: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int | np.integer) or value < minimum:
        raise ValueError(f"{name} must be a whole number of at least {minimum}, got {value!r}.")
    return int(value)


@dataclass(frozen=True)
class BenchConfig:
    """One sweep. ``impls`` None means every implementation available on the device."""

    lengths: tuple[int, ...] = (256, 512, 1024, 2048)
    impls: tuple[str, ...] | None = None
    batch: int = 1
    heads: int = 8
    head_dim: int = 64
    dtype: str = "fp32"
    causal: bool = False
    device: str = "cpu"
    window: int = 256  # sliding-window width of the FlexAttention implementation
    warmup: int = 1  # least warm-up calls per point (0: none at all)
    warmup_s: float = 0.2  # least warm-up time per point, when warmup is at least 1
    repeats: int = 10
    budget_s: float = 2.0  # stop repeating a point after this long (once MIN_REPEATS are done)
    time_limit_s: float = 60.0  # skip a point predicted to take longer than this
    call_limit_s: float = 5.0  # skip a point whose single call is predicted longer: Cancel waits for one

    def __post_init__(self) -> None:
        if self.device not in DEVICES:
            raise ValueError(f"Device must be one of {', '.join(DEVICES)}, got {self.device!r}.")
        if self.dtype not in DTYPES:
            raise ValueError(f"dtype must be one of {', '.join(DTYPES)}, got {self.dtype!r}.")
        lengths = tuple(self.lengths)
        if not lengths:
            raise ValueError("Give at least one sequence length.")
        for n in lengths:
            _whole("Each sequence length", n, 1)
        object.__setattr__(self, "lengths", tuple(sorted({int(n) for n in lengths})))
        for name in ("batch", "heads", "head_dim", "window", "repeats"):
            _whole(name, getattr(self, name), 1)
        _whole("warmup", self.warmup, 0)
        if not (
            isinstance(self.warmup_s, int | float) and math.isfinite(self.warmup_s) and self.warmup_s >= 0
        ):
            raise ValueError(f"warmup_s must be a number of seconds of at least 0, got {self.warmup_s!r}.")
        for name in ("budget_s", "time_limit_s", "call_limit_s"):
            value = getattr(self, name)
            if not (isinstance(value, int | float) and math.isfinite(value) and value > 0):
                raise ValueError(f"{name} must be a positive number of seconds, got {value!r}.")
        if self.device == "cuda":
            check_cuda()
            import torch

            if self.dtype == "bf16" and not torch.cuda.is_bf16_supported():
                raise ValueError("This GPU does not support bf16; choose fp16 or fp32.")
        impls = available_impls(self.device) if self.impls is None else tuple(self.impls)
        if not impls:
            raise ValueError("Choose at least one implementation.")
        for key in impls:
            if key not in IMPLEMENTATIONS:
                raise ValueError(f"Unknown implementation {key!r}; choose from {', '.join(IMPLEMENTATIONS)}.")
            reason = missing_on(key, self.device)
            if reason is not None:
                choices = ", ".join(available_impls(self.device))
                raise ValueError(f"{key} cannot run on {self.device}: {reason}. Available: {choices}.")
        object.__setattr__(self, "impls", tuple(dict.fromkeys(impls)))

    def points(self) -> list[tuple[int, str]]:
        """(n, implementation) in the order they run: n outer, implementation inner."""
        return [(n, key) for n in self.lengths for key in self.impls]


@dataclass(frozen=True)
class BenchResult:
    """One measured point. Times in seconds, memory in bytes; None where not measured."""

    impl: str
    device: str
    dtype: str
    n: int
    batch: int
    heads: int
    head_dim: int
    causal: bool
    median_s: float | None
    tflops: float | None
    peak_bytes: int | None
    max_abs_error: float | None
    status: str  # "ok", "skipped: reason" or "not available: reason"
    window: int | None = None  # set for sliding-window implementations
    repeats: int = 0  # timed calls behind the median
    tflops_pct: float | None = None  # share of the device's peak TFLOP/s, where known
    compile_s: float | None = None  # first call including compilation (compiled kernels only)
    spread: float | None = None  # the timed calls' interquartile range over their median (2+ calls)

    @property
    def ok(self) -> bool:
        return self.status == "ok"

    @property
    def noisy(self) -> bool:
        """The timed calls spread so widely that the median cannot be trusted (NOISY_SPREAD)."""
        return self.spread is not None and self.spread > NOISY_SPREAD

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


RESULT_COLUMNS = tuple(f.name for f in fields(BenchResult))


@dataclass(frozen=True)
class BenchReport:
    """A finished (or cancelled) sweep: the device and one result per point that ran."""

    device: DeviceInfo
    config: BenchConfig
    results: tuple[BenchResult, ...] = field(default_factory=tuple)

    def as_dict(self) -> dict[str, Any]:
        return {"device": self.device.as_dict(), "results": [r.as_dict() for r in self.results]}

    def to_json(self) -> str:
        return json.dumps(self.as_dict(), indent=2)

    def to_csv(self) -> str:
        buffer = io.StringIO()
        writer = csv.DictWriter(buffer, fieldnames=RESULT_COLUMNS, lineterminator="\n")
        writer.writeheader()
        for result in self.results:
            writer.writerow({k: "" if v is None else v for k, v in result.as_dict().items()})
        return buffer.getvalue()


def attention_flops(
    batch: int, heads: int, n: int, head_dim: int, causal: bool, window: int | None = None
) -> int:
    """FLOPs of one attention forward pass by the FlashAttention benchmark convention.

    Dense: 4·B·H·n²·d (two matrix products of 2·n²·d each), halved when causal. With a sliding
    window: 4·B·H·d times the exact number of (query, key) cells the window allows.
    """
    if window is None:
        cells = n * n // 2 if causal else n * n
    else:
        i = np.arange(n)
        if causal:
            cells = int(np.minimum(i + 1, window).sum())
        else:
            cells = int((np.minimum(i, window - 1) + np.minimum(n - 1 - i, window - 1) + 1).sum())
    return 4 * batch * heads * head_dim * cells


def _gb(b: float) -> str:
    return f"{b / 1e9:.2f} GB" if b >= 1e8 else f"{b / 1e6:.1f} MB"


def _rounded(x: np.ndarray, dtype: str) -> np.ndarray:
    """x as the implementation sees it after casting to ``dtype``, back in float64."""
    if dtype == "bf16":
        import torch

        return torch.from_numpy(np.ascontiguousarray(x)).to(torch.bfloat16).double().numpy()
    if dtype == "fp16":
        return x.astype(np.float16).astype(np.float64)
    return x.astype(np.float64)


def _check_heads(batch: int, heads: int) -> list[tuple[int, int]]:
    return list(dict.fromkeys([(0, 0), (batch - 1, heads - 1)]))


def _check_rows(n: int) -> np.ndarray:
    return np.unique(np.linspace(0, n - 1, min(n, CHECK_ROWS)).round().astype(int))  # (r,)


def reference_rows(problem: Problem, head: tuple[int, int], rows: np.ndarray) -> np.ndarray:
    """float64 attention output of ``rows`` of one head, from the dtype-rounded inputs. (r, d)"""
    b, h = head
    q = _rounded(problem.q[b, h, rows], problem.dtype)
    k = _rounded(problem.k[b, h], problem.dtype)
    v = _rounded(problem.v[b, h], problem.dtype)
    keys = np.arange(k.shape[0])[None, :]
    if problem.linear:  # core.maths.linear's weights, only for these rows
        weights = elu_plus_one(q) @ elu_plus_one(k).T  # (r, n)
        if problem.causal:
            weights = np.where(rows[:, None] >= keys, weights, 0.0)
        return weights @ v / weights.sum(axis=1, keepdims=True)
    if problem.window is not None:
        mask = window_allows(rows[:, None], keys, problem.window, problem.causal)
    elif problem.causal:
        mask = rows[:, None] >= keys
    else:
        mask = None
    return attend(q, k, v, mask=mask).output


def _warm_up(call: Callable[[], Any], config: BenchConfig, tick: Callable[[], None]) -> None:
    """Untimed calls: at least ``warmup`` of them for at least ``warmup_s``, and then on while the
    last one is SETTLED times slower than the fastest (up to WARMUP_CAP × ``warmup_s``)."""
    if config.warmup == 0:
        return
    started = last_tick = time.perf_counter()
    fastest, calls = math.inf, 0
    while True:
        t0 = time.perf_counter()
        call()
        synchronize(config.device)
        now = time.perf_counter()
        took, calls, fastest = now - t0, calls + 1, min(fastest, now - t0)
        if now - last_tick >= TICK_EVERY_S:
            tick()
            last_tick = now
        if calls < config.warmup or now - started < config.warmup_s:
            continue
        if took <= SETTLED * fastest or now - started >= WARMUP_CAP * config.warmup_s:
            break
    tick()


def _time_calls(call: Callable[[], Any], config: BenchConfig, tick: Callable[[], None]) -> list[float]:
    """Wall time of each timed call after the warm-up; stops early after ``budget_s``."""
    _warm_up(call, config, tick)
    times: list[float] = []
    started = time.perf_counter()
    while len(times) < config.repeats:
        synchronize(config.device)
        t0 = time.perf_counter()
        call()
        synchronize(config.device)
        times.append(time.perf_counter() - t0)
        tick()
        if len(times) >= MIN_REPEATS and time.perf_counter() - started > config.budget_s:
            break
    return times


class _Sweep:
    """One running sweep: its settings, the device and the last timing per implementation."""

    def __init__(self, config: BenchConfig, device: DeviceInfo, tick: Callable[[], None]):
        self.config, self.device, self.tick = config, device, tick
        self.last_time: dict[str, tuple[int, float]] = {}  # impl -> (n, median_s)

    def result(self, impl: Implementation, n: int, status: str, **measured: Any) -> BenchResult:
        """The result row of a point; ``measured`` fills the fields a run produced."""
        c = self.config
        window = c.window if impl.windowed else None
        empty = BenchResult(
            impl.key, c.device, c.dtype, n, c.batch, c.heads, c.head_dim, c.causal,
            None, None, None, None, status, window,
        )  # fmt: skip
        return replace(empty, **measured)

    def gate(self, impl: Implementation, problem: Problem) -> str | None:
        """'skipped: …' when the point would not fit in memory, or is predicted to take longer than
        the time limit, or to hold one call (which Cancel cannot interrupt) past the call limit."""
        c, n = self.config, problem.shape[2]
        size = ITEMSIZE[c.dtype] if impl.library == "torch" else 8 if c.dtype == "fp64" else 4
        inputs = 3 * c.batch * c.heads * n * c.head_dim * size
        need = inputs + impl.working_bytes(c.batch, c.heads, n, c.head_dim, size, c.causal)
        free = free_bytes(c.device)
        if free is not None and need > MEMORY_HEADROOM * free:
            return f"skipped: would need {_gb(need)}, {_gb(free)} free"
        grows_like_n = impl.windowed or impl.linear
        if impl.key not in self.last_time and not (impl.compiles or grows_like_n):
            self.calibrate(impl, problem)
        if impl.key in self.last_time:
            n0, t0 = self.last_time[impl.key]
            call = t0 * (n / n0 if grows_like_n else (n / n0) ** 2)
            if call > c.call_limit_s:
                return f"skipped: one call would take about {call:.0f} s (limit {c.call_limit_s:.0f} s)"
            predicted = call * (c.warmup + MIN_REPEATS) + (c.warmup_s if c.warmup else 0)
            if predicted > c.time_limit_s:
                return f"skipped: would take about {predicted:.0f} s (limit {c.time_limit_s:.0f} s per point)"
        return None

    def calibrate(self, impl: Implementation, problem: Problem) -> None:
        """Time one call on the first m tokens, halving m from n until the call does at most
        CALIBRATION_FLOPS, so that a sweep's first point is predicted like the later ones."""
        c, m = self.config, problem.shape[2]
        work = partial(attention_flops, c.batch, c.heads, head_dim=c.head_dim, causal=c.causal)
        while m > PROBE_TOKENS and work(n=m) > CALIBRATION_FLOPS:
            m //= 2
        if m == problem.shape[2]:
            return  # small enough to run as it is
        q, k, v = (np.ascontiguousarray(x[:, :, :m]) for x in (problem.q, problem.k, problem.v))
        try:
            call = impl.prepare(replace(problem, q=q, k=k, v=v))
            call()  # a first call may allocate or pick kernels; the second is timed
            synchronize(c.device)
            self.tick()
            started = time.perf_counter()
            call()
            synchronize(c.device)
        except (Refused, MemoryError, RuntimeError):
            return  # the point itself reports why it cannot run
        self.last_time[impl.key] = (m, time.perf_counter() - started)
        self.tick()

    def run_point(self, impl: Implementation, problem: Problem) -> BenchResult:
        c, n = self.config, problem.shape[2]
        gated = self.gate(impl, problem)
        if gated is not None:
            return self.result(impl, n, gated)
        try:
            started = time.perf_counter()
            call = impl.prepare(problem)
            prepared_s = time.perf_counter() - started
            times = _time_calls(call, c, self.tick)
            out, peak = measure_peak(call, c.device)
        except Refused as refusal:
            return self.result(impl, n, f"not available: {refusal}")
        except (MemoryError, RuntimeError) as error:
            if isinstance(error, RuntimeError) and "out of memory" not in str(error).lower():
                raise
            return self.result(impl, n, "skipped: ran out of memory")
        rows = _check_rows(n)
        error = max(
            float(np.max(np.abs(impl.to_numpy(out, h, rows) - reference_rows(problem, h, rows))))
            for h in _check_heads(c.batch, c.heads)
        )
        del out
        median = statistics.median(times)
        self.last_time[impl.key] = (n, median)
        spread = None
        if len(times) >= 2 and median > 0:
            low, high = np.percentile(times, [25, 75])
            spread = float((high - low) / median)
        if impl.linear:
            flops = linear_flops(c.batch, c.heads, n, c.head_dim, c.causal)
        else:
            flops = attention_flops(
                c.batch, c.heads, n, c.head_dim, c.causal, c.window if impl.windowed else None
            )
        tflops = flops / median / 1e12
        peak_tflops = self.device.peak_tflops
        return self.result(
            impl, n, "ok", median_s=median, tflops=tflops, peak_bytes=peak,
            max_abs_error=error, repeats=len(times),
            tflops_pct=100 * tflops / peak_tflops if peak_tflops else None,
            compile_s=prepared_s if impl.compiles else None, spread=spread,
        )  # fmt: skip


def run_benchmark(
    config: BenchConfig,
    rng: np.random.Generator | None = None,
    progress: Progress | None = None,
    on_point: Callable[[BenchResult], None] | None = None,
) -> BenchReport:
    """Run every point of ``config``; inputs are standard normal from ``rng`` (seed 0 if None).

    ``progress(done, total)`` is called before the first point, after every timed call (with
    the same ``done``) and after each point, so a callback that raises cancels within a point.
    ``on_point`` receives each result as soon as its point finishes.
    """
    rng = np.random.default_rng(0) if rng is None else rng
    seeds = rng.integers(2**63, size=len(config.lengths))  # one input stream per n
    device = describe_device(config.device, config.dtype)
    results: list[BenchResult] = []
    total = len(config.points())

    def tick() -> None:
        if progress is not None:
            progress(len(results), total)

    sweep = _Sweep(config, device, tick)
    if config.device == "cpu":
        settle_heap()
    tick()
    c = config
    for n, seed in zip(c.lengths, seeds, strict=True):
        host = 3 * c.batch * c.heads * n * c.head_dim * 4  # float32 q, k, v
        free = free_bytes("cpu")
        too_big = free is not None and host > MEMORY_HEADROOM * free
        qkv = None
        if not too_big:
            shape = (3, c.batch, c.heads, n, c.head_dim)
            qkv = np.random.default_rng(seed).standard_normal(shape, dtype=np.float32)
        for key in c.impls:
            impl = IMPLEMENTATIONS[key]
            if qkv is None:
                status = f"skipped: the inputs alone need {_gb(host)}, {_gb(free)} free"
                result = sweep.result(impl, n, status)
            else:
                window = c.window if impl.windowed else None
                problem = Problem(qkv[0], qkv[1], qkv[2], c.dtype, c.device, c.causal, window, impl.linear)
                result = sweep.run_point(impl, problem)
            results.append(result)
            if on_point is not None:
                on_point(result)
            tick()
        del qkv
    return BenchReport(device, config, tuple(results))


def fit_slopes(
    results: tuple[BenchResult, ...] | list[BenchResult], what: str, min_lengths: int = 2
) -> dict[str, float]:
    """Log-log slope of ``what`` ("median_s" or "peak_bytes") vs n per implementation.

    Only points that ran, with a positive value, at ``min_lengths`` or more distinct n count
    (MEANINGFUL_SLOPE_LENGTHS for a figure to quote). ≈2 means quadratic growth, ≈1 linear. No
    time slope is fitted through a noisy point: that implementation is left out (see
    ``withheld_slopes`` for why).
    """
    withheld = withheld_slopes(results, what, min_lengths)
    slopes = {}
    for impl, pairs in _fitted_points(results, what).items():
        if impl not in withheld and len({n for n, _ in pairs}) >= min_lengths:
            n, y = np.log(np.array([(n, value) for n, value in pairs])).T
            slopes[impl] = float(np.polyfit(n, y, 1)[0])
    return slopes


def withheld_slopes(
    results: tuple[BenchResult, ...] | list[BenchResult], what: str, min_lengths: int = 2
) -> dict[str, str]:
    """Implementation → why its slope of ``what`` is not given though it ran at enough lengths:
    a time slope would go through a point whose timed calls spread past NOISY_SPREAD, or through
    one timed in a single call, whose spread is unknown."""
    if what != "median_s":
        return {}
    withheld = {}
    for impl, pairs in _fitted_points(results, what).items():
        if len({n for n, _ in pairs}) < min_lengths:
            continue
        ran = sorted((r for r in results if r.impl == impl and r.ok), key=lambda r: r.n)
        noisy = [r for r in ran if r.noisy]
        once = [r for r in ran if r.spread is None]
        if noisy:
            worst = max(noisy, key=lambda r: r.spread)
            withheld[impl] = (
                f"the timing at n = {_lengths(noisy)} is noise (its calls spread {worst.spread:.0%} "
                f"around the median, more than {NOISY_SPREAD:.0%}: something else was running); "
                "run it again"
            )
        elif once:
            withheld[impl] = (
                f"n = {_lengths(once)} {ONE_CALL}, so how far its calls spread is unknown "
                "and a disturbed call cannot be told apart; time each point at least twice"
            )
    return withheld


def _lengths(results: list[BenchResult]) -> str:
    return ", ".join(str(r.n) for r in results)


def _fitted_points(
    results: tuple[BenchResult, ...] | list[BenchResult], what: str
) -> dict[str, list[tuple[int, float]]]:
    by_impl: dict[str, list[tuple[int, float]]] = {}
    for r in results:
        value = getattr(r, what)
        if r.ok and value is not None and value > 0:
            by_impl.setdefault(r.impl, []).append((r.n, float(value)))
    return by_impl


def _linear_crossover(results: tuple[BenchResult, ...] | list[BenchResult]) -> str | None:
    """Where linear attention overtakes: the shortest measured n from which on it beats every
    softmax implementation that ran at the same n; None without a linear point."""
    lengths = sorted({r.n for r in results if r.ok and IMPLEMENTATIONS[r.impl].linear})
    if not lengths:
        return None
    beats = []
    for n in lengths:
        ran = [r for r in results if r.n == n and r.ok]
        linear = next(r for r in ran if IMPLEMENTATIONS[r.impl].linear)
        softmax = [r for r in ran if IMPLEMENTATIONS[r.impl].computes == "softmax"]
        if not softmax:
            return None
        best = min(softmax, key=lambda r: r.median_s)
        beats.append((n, linear.median_s < best.median_s, best))
    first = next((k for k in range(len(beats)) if all(b for _, b, _ in beats[k:])), None)
    if first is None:
        return f"Linear attention beat no softmax implementation up to n={lengths[-1]}."
    n, _, best = beats[first]
    if first == 0:
        return f"Linear attention is the fastest from the shortest length on (n={n}), ahead of {best.impl}."
    slower = beats[first - 1]
    return f"Linear attention is the fastest from n={n} on (at n={slower[0]} {slower[2].impl} was faster)."


def fastest_summary(results: tuple[BenchResult, ...] | list[BenchResult]) -> str:
    """One line: the fastest implementation per n and its speed-up over the naive baseline, and
    where linear attention overtakes softmax when it was measured."""
    parts = []
    for n in sorted({r.n for r in results}):
        ran = [r for r in results if r.n == n and r.ok]
        if not ran:
            parts.append(f"n={n}: nothing ran")
            continue
        best = min(ran, key=lambda r: r.median_s)
        base = next((r for key in BASELINES for r in ran if r.impl == key), None)
        if base is None or base is best:
            parts.append(f"n={n}: {best.impl}")
        else:
            parts.append(f"n={n}: {best.impl} ({base.median_s / best.median_s:.1f}× {base.impl})")
    crossover = _linear_crossover(results)
    return "Fastest — " + "; ".join(parts) + (f". {crossover}" if crossover else "")
