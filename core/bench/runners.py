"""The attention implementations the benchmark times, each behind one small interface.

Every implementation takes Q, K, V of shape (batch, heads, n, head_dim) and returns the output
of the same shape. ``prepare`` converts the inputs (untimed) and returns the call to time.
torch is imported inside the torch implementations only; the numpy ones work without it.
"""

from __future__ import annotations

import functools
import importlib.util
import math
import re
import warnings
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from core.maths.flash import tiled_attention
from core.maths.masks import causal as causal_mask

NUMPY_DTYPES = {"fp64": np.float64, "fp32": np.float32, "fp16": np.float16}
ITEMSIZE = {"fp64": 8, "fp32": 4, "fp16": 2, "bf16": 2}
TILE = 128  # block_q = block_k of the numpy tiled implementation (capped at n)
LINEAR_CHUNK = 64  # tokens per chunk of causal linear attention


class Refused(Exception):
    """An implementation cannot run this configuration; the message says why."""


@dataclass(frozen=True)
class Problem:
    """One benchmark point's inputs: q, k, v float32 (batch, heads, n, head_dim)."""

    q: np.ndarray
    k: np.ndarray
    v: np.ndarray
    dtype: str  # "fp64", "fp32", "fp16" or "bf16"
    device: str  # "cpu" or "cuda"
    causal: bool
    window: int | None  # sliding-window width, only for implementations that use one
    linear: bool = False  # linear attention (elu + 1 features): another function, its own reference

    @property
    def shape(self) -> tuple[int, int, int, int]:
        return self.q.shape  # (batch, heads, n, head_dim)


@dataclass(frozen=True)
class Implementation:
    """One way of computing attention, with its memory estimate and its runner."""

    key: str
    label: str
    library: str  # "numpy" or "torch"
    devices: tuple[str, ...]
    computes: str  # "softmax", "window" (a sliding window) or "linear" (linear attention)
    compiles: bool  # its first call compiles a kernel (the time is reported as compile_s)
    working_bytes: Callable[[int, int, int, int, int, bool], int]  # (B, H, n, d, itemsize, causal)
    prepare: Callable[[Problem], Callable[[], Any]]  # returns the call to time
    to_numpy: Callable[[Any, tuple[int, int], np.ndarray], np.ndarray]  # output → float64 rows

    @property
    def windowed(self) -> bool:
        return self.computes == "window"

    @property
    def linear(self) -> bool:
        return self.computes == "linear"


def refusal_reason(error: BaseException, caught: list[warnings.WarningMessage]) -> str:
    """A one-line reason from a refused kernel: torch's warnings first, else the error."""
    lines = [str(w.message).strip().splitlines()[0] for w in caught if str(w.message).strip()]
    lines = [ln for ln in lines if "kernel" in ln.lower() or "support" in ln.lower()] or lines
    text = "; ".join(dict.fromkeys(lines)) if lines else str(error).strip().splitlines()[0]
    text = re.sub(r"^(?:\w+(?:Exception|Error):\s*)+", "", text or type(error).__name__)
    return text[:300]


# ---- numpy ---------------------------------------------------------------------------------


def _numpy_dtype(problem: Problem) -> np.dtype:
    if problem.dtype == "bf16":
        raise Refused("numpy has no bfloat16 type")
    if problem.dtype == "fp16":
        raise Refused("numpy multiplies float16 matrices without BLAS (far too slow to compare)")
    return np.dtype(NUMPY_DTYPES[problem.dtype])


def _numpy_naive(q: np.ndarray, k: np.ndarray, v: np.ndarray, causal: bool) -> np.ndarray:
    """softmax(q·kᵀ/√d)·v with the whole (n, n) score matrix per head. (B, H, n, d)"""
    scores = q @ k.swapaxes(-1, -2)  # (B, H, n, n)
    scores *= 1.0 / math.sqrt(q.shape[-1])
    if causal:
        n = q.shape[-2]
        np.copyto(scores, -np.inf, where=~causal_mask(n))
    scores -= scores.max(axis=-1, keepdims=True)
    np.exp(scores, out=scores)
    scores /= scores.sum(axis=-1, keepdims=True)
    return scores @ v


def _prepare_numpy_naive(problem: Problem) -> Callable[[], np.ndarray]:
    dtype = _numpy_dtype(problem)
    q, k, v = (x.astype(dtype) for x in (problem.q, problem.k, problem.v))
    return lambda: _numpy_naive(q, k, v, problem.causal)


def _prepare_numpy_tiled(problem: Problem) -> Callable[[], np.ndarray]:
    if problem.dtype != "fp64":
        raise Refused("core.maths.flash computes in float64 only; choose fp64")
    q, k, v = (x.astype(np.float64) for x in (problem.q, problem.k, problem.v))
    batch, heads, n, _ = problem.shape
    block = min(TILE, n)
    mask = causal_mask(n) if problem.causal else None

    def call() -> np.ndarray:
        out = np.empty_like(q)
        for b in range(batch):
            for h in range(heads):
                trace = tiled_attention(q[b, h], k[b, h], v[b, h], block, block, mask, record=False)
                out[b, h] = trace.output
        return out

    return call


def _numpy_rows(out: np.ndarray, head: tuple[int, int], rows: np.ndarray) -> np.ndarray:
    return np.asarray(out[head[0], head[1], rows], dtype=np.float64)


# ---- torch ---------------------------------------------------------------------------------


def torch_dtype(name: str):
    import torch

    return {
        "fp64": torch.float64,
        "fp32": torch.float32,
        "fp16": torch.float16,
        "bf16": torch.bfloat16,
    }[name]


def _to_torch(problem: Problem):
    import torch

    dtype = torch_dtype(problem.dtype)
    return tuple(
        torch.from_numpy(x).to(device=problem.device, dtype=dtype) for x in (problem.q, problem.k, problem.v)
    )


def _torch_rows(out, head: tuple[int, int], rows: np.ndarray) -> np.ndarray:
    import torch

    index = torch.as_tensor(rows, device=out.device)
    picked = out[head[0], head[1]].index_select(0, index)
    return picked.double().cpu().numpy()


def _prepare_torch_naive(problem: Problem):
    import torch

    q, k, v = _to_torch(problem)
    n = problem.shape[2]
    future = None
    if problem.causal:
        future = torch.ones(n, n, dtype=torch.bool, device=problem.device).triu_(1)
    scale = 1.0 / math.sqrt(problem.shape[3])

    def call():
        scores = (q @ k.transpose(-2, -1)) * scale  # (B, H, n, n)
        if future is not None:
            scores.masked_fill_(future, float("-inf"))
        return torch.softmax(scores, dim=-1) @ v

    return call


def _sdpa_preparer(backend_name: str) -> Callable[[Problem], Callable[[], Any]]:
    def prepare(problem: Problem):
        import torch.nn.functional as F
        from torch.nn.attention import SDPBackend, sdpa_kernel

        backend = getattr(SDPBackend, backend_name)
        q, k, v = _to_torch(problem)

        def call():
            with sdpa_kernel(backend):
                return F.scaled_dot_product_attention(q, k, v, is_causal=problem.causal)

        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            try:
                call()  # a backend that cannot take this configuration refuses here
            except RuntimeError as error:
                raise Refused(refusal_reason(error, caught)) from error
        return call

    return prepare


@functools.cache
def _compiled_flex():
    import torch
    from torch.nn.attention.flex_attention import flex_attention

    return torch.compile(flex_attention)


def window_allows(q_idx, k_idx, window: int, causal: bool):
    """The sliding-window rule of core.maths.masks.sliding_window, for arrays or torch tensors."""
    offset = q_idx - k_idx
    if causal:
        return (offset >= 0) & (offset < window)
    return (offset < window) & (offset > -window)


def prepare_flex(problem: Problem, compiled: bool = True):
    """FlexAttention with a sliding-window block mask; ``compiled=False`` runs it unfused."""
    from torch.nn.attention.flex_attention import create_block_mask, flex_attention

    q, k, v = _to_torch(problem)
    n = problem.shape[2]
    window, causal = problem.window, problem.causal

    def mask_mod(b, h, q_idx, kv_idx):
        return window_allows(q_idx, kv_idx, window, causal)

    block_mask = create_block_mask(mask_mod, None, None, n, n, device=problem.device)
    kernel = _compiled_flex() if compiled else flex_attention

    def call():
        return kernel(q, k, v, block_mask=block_mask)

    try:
        call()  # compiles on the first call; a refusal surfaces here
    except (RuntimeError, NotImplementedError, OSError) as error:
        raise Refused(refusal_reason(error, [])) from error
    return call


def _prepare_linear(problem: Problem):
    """Linear attention with φ = elu + 1 (core.maths.linear): the bracket form, or causal in
    chunks of LINEAR_CHUNK tokens: the masked form inside a chunk, the running state from before."""
    from torch.nn import functional as F

    q, k, v = _to_torch(problem)
    batch, heads, n, d = problem.shape
    chunks = -(-n // LINEAR_CHUNK)
    pad = chunks * LINEAR_CHUNK - n

    def call():
        qf, kf = F.elu(q) + 1, F.elu(k) + 1
        if not problem.causal:
            state, total = kf.transpose(-2, -1) @ v, kf.sum(dim=-2)  # (B, H, d, d), (B, H, d)
            return (qf @ state) / (qf @ total[..., None])
        qc, kc, vc = (
            F.pad(x, (0, 0, 0, pad)).view(batch, heads, chunks, LINEAR_CHUNK, d) for x in (qf, kf, v)
        )
        inside = (qc @ kc.transpose(-2, -1)).tril()  # (B, H, chunks, C, C)
        written = kc.transpose(-2, -1) @ vc  # (B, H, chunks, d, d): each chunk's part of the state
        before = written.cumsum(dim=2) - written  # the state each chunk starts from
        sums = kc.sum(dim=-2)
        sums_before = sums.cumsum(dim=2) - sums  # (B, H, chunks, d)
        numerator = qc @ before + inside @ vc
        normaliser = (qc @ sums_before[..., None])[..., 0] + inside.sum(dim=-1)
        out = numerator / normaliser[..., None]
        return out.view(batch, heads, chunks * LINEAR_CHUNK, d)[:, :, :n]

    return call


def linear_flops(batch: int, heads: int, n: int, head_dim: int, causal: bool) -> int:
    """FLOPs of linear attention as computed here: 4·n·d² for φ(K)ᵀ·V and φ(Q)·S, plus, causal,
    4·n·C·d for the masked products inside each chunk of C tokens."""
    inside = 4 * n * LINEAR_CHUNK * head_dim if causal else 0
    return batch * heads * (4 * n * head_dim * head_dim + inside)


# ---- memory estimates (bytes beyond the inputs) ---------------------------------------------


def _naive_numpy_bytes(B: int, H: int, n: int, d: int, s: int, causal: bool) -> int:
    return B * H * n * n * s + (n * n if causal else 0) + B * H * n * d * s


def _tiled_bytes(B: int, H: int, n: int, d: int, s: int, causal: bool) -> int:
    block = min(TILE, n)
    return (n * n if causal else 0) + 2 * B * H * n * d * 8 + 4 * block * block * 8


def _naive_torch_bytes(B: int, H: int, n: int, d: int, s: int, causal: bool) -> int:
    return 2 * B * H * n * n * s + (n * n if causal else 0) + B * H * n * d * s


def _math_bytes(B: int, H: int, n: int, d: int, s: int, causal: bool) -> int:
    return 3 * B * H * n * n * max(s, 4) + (n * n if causal else 0) + B * H * n * d * s


def _fused_bytes(B: int, H: int, n: int, d: int, s: int, causal: bool) -> int:
    return 2 * B * H * n * d * s + B * H * n * 4


def _linear_bytes(B: int, H: int, n: int, d: int, s: int, causal: bool) -> int:
    states = 2 * (n // LINEAR_CHUNK + 1) * d * d if causal else d * d  # each chunk's part and its start
    return B * H * s * (4 * n * d + states + (n * LINEAR_CHUNK if causal else 0))


IMPLEMENTATIONS: dict[str, Implementation] = {
    impl.key: impl
    for impl in (
        Implementation(
            "numpy-naive",
            "numpy naive",
            "numpy",
            ("cpu",),
            "softmax",
            False,
            _naive_numpy_bytes,
            _prepare_numpy_naive,
            _numpy_rows,
        ),
        Implementation(
            "numpy-tiled",
            "numpy tiled (core.maths.flash)",
            "numpy",
            ("cpu",),
            "softmax",
            False,
            _tiled_bytes,
            _prepare_numpy_tiled,
            _numpy_rows,
        ),
        Implementation(
            "torch-naive",
            "torch naive",
            "torch",
            ("cpu", "cuda"),
            "softmax",
            False,
            _naive_torch_bytes,
            _prepare_torch_naive,
            _torch_rows,
        ),
        Implementation(
            "sdpa-math",
            "SDPA MATH",
            "torch",
            ("cpu", "cuda"),
            "softmax",
            False,
            _math_bytes,
            _sdpa_preparer("MATH"),
            _torch_rows,
        ),
        Implementation(
            "sdpa-flash",
            "SDPA FLASH_ATTENTION",
            "torch",
            ("cpu", "cuda"),
            "softmax",
            False,
            _fused_bytes,
            _sdpa_preparer("FLASH_ATTENTION"),
            _torch_rows,
        ),
        Implementation(
            "sdpa-efficient",
            "SDPA EFFICIENT_ATTENTION",
            "torch",
            ("cuda",),
            "softmax",
            False,
            _fused_bytes,
            _sdpa_preparer("EFFICIENT_ATTENTION"),
            _torch_rows,
        ),
        Implementation(
            "sdpa-cudnn",
            "SDPA CUDNN_ATTENTION",
            "torch",
            ("cuda",),
            "softmax",
            False,
            _fused_bytes,
            _sdpa_preparer("CUDNN_ATTENTION"),
            _torch_rows,
        ),
        Implementation(
            "flex-window",
            "FlexAttention sliding window",
            "torch",
            ("cpu", "cuda"),
            "window",
            True,
            _fused_bytes,
            prepare_flex,
            _torch_rows,
        ),
        Implementation(
            "linear",
            "linear attention (elu + 1, chunked)",
            "torch",
            ("cpu", "cuda"),
            "linear",
            False,
            _linear_bytes,
            _prepare_linear,
            _torch_rows,
        ),
    )
}


def missing_on(key: str, device: str) -> str | None:
    """Why implementation ``key`` does not exist on ``device`` in this installation, or None."""
    impl = IMPLEMENTATIONS[key]
    if device not in impl.devices:
        return f"{impl.label} has no {device.upper()} kernel"
    if impl.library == "numpy":
        return None
    try:
        import torch
    except ImportError:
        return "torch is not installed"
    if key == "sdpa-cudnn" and not torch.backends.cudnn.is_available():
        return "this torch has no cuDNN"
    flash_built = torch.backends.cuda.is_flash_attention_available()
    if key == "sdpa-flash" and device == "cuda" and not flash_built:
        return "this torch was built without the flash-attention kernel"
    if key == "flex-window" and importlib.util.find_spec("torch.nn.attention.flex_attention") is None:
        return f"torch {torch.__version__} has no FlexAttention"
    return None
