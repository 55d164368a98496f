"""What the benchmark runs on: device description, free memory, peak-memory probes.

torch is imported inside the functions that need it, so the CPU/numpy side works without it.
"""

from __future__ import annotations

import ctypes
import os
import platform
import re
from collections.abc import Callable
from dataclasses import asdict, dataclass
from typing import Any

from core.models.advice import models_advice

# Dense (no sparsity) tensor-core peak in TFLOP/s from the vendors' data sheets, by a substring of
# torch.cuda.get_device_name(). Checked in order: the first matching entry wins.
PEAK_TFLOPS: tuple[tuple[str, dict[str, float]], ...] = (
    ("H200", {"bf16": 989.4, "fp16": 989.4}),
    ("H100 PCIe", {"bf16": 756.5, "fp16": 756.5}),
    ("H100 NVL", {"bf16": 835.5, "fp16": 835.5}),
    ("H100", {"bf16": 989.4, "fp16": 989.4}),
    ("A100", {"bf16": 312.0, "fp16": 312.0}),
    ("L40S", {"bf16": 362.1, "fp16": 362.1}),
    ("L4", {"bf16": 121.0, "fp16": 121.0}),
)


@dataclass(frozen=True)
class DeviceInfo:
    """The device a sweep ran on, as written to the JSON report."""

    kind: str  # "cpu" or "cuda"
    name: str
    memory_bytes: int | None  # total memory of the device (RAM for the CPU)
    peak_tflops: float | None  # vendor peak for the sweep's dtype, where known
    dtype: str
    torch_version: str | None
    threads: int | None  # CPU threads torch uses (None without torch or on CUDA)

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def torch_available() -> bool:
    """True when torch can be imported (it is an optional dependency)."""
    try:
        import torch  # noqa: F401
    except ImportError:
        return False
    return True


def cuda_available() -> bool:
    if not torch_available():
        return False
    import torch

    return bool(torch.cuda.is_available())


def check_cuda() -> None:
    """Raise ValueError with a readable reason when CUDA cannot be used."""
    if not torch_available():
        raise ValueError(f"CUDA needs torch, which is not installed. {models_advice()}")
    import torch

    if torch.version.cuda is None and getattr(torch.version, "hip", None) is None:
        raise ValueError(
            f"CUDA was requested, but this torch ({torch.__version__}) is built for the CPU "
            "only; use --device cpu or install a CUDA build of torch."
        )
    if not torch.cuda.is_available():
        raise ValueError("CUDA was requested, but torch sees no GPU; use --device cpu.")


def _cpu_name() -> str:
    try:
        with open("/proc/cpuinfo") as f:
            found = re.search(r"^model name\s*:\s*(.+)$", f.read(), re.M)
        if found:
            return found.group(1).strip()
    except OSError:
        pass
    return platform.processor() or platform.machine() or "CPU"


def _meminfo(key: str) -> int | None:
    """A /proc/meminfo entry in bytes (Linux), or None."""
    try:
        with open("/proc/meminfo") as f:
            found = re.search(rf"^{key}:\s+(\d+) kB", f.read(), re.M)
    except OSError:
        return None
    return int(found.group(1)) * 1024 if found else None


def _sysconf_bytes(pages: str) -> int | None:
    try:
        return os.sysconf(pages) * os.sysconf("SC_PAGE_SIZE")
    except (AttributeError, ValueError, OSError):
        return None


def describe_device(kind: str, dtype: str) -> DeviceInfo:
    """Name, memory and (for known GPUs) peak TFLOP/s of ``kind`` ("cpu" or "cuda")."""
    version = None
    if torch_available():
        import torch

        version = torch.__version__
    if kind == "cuda":
        check_cuda()
        import torch

        name = torch.cuda.get_device_name()
        memory = int(torch.cuda.get_device_properties(torch.cuda.current_device()).total_memory)
        peak = next((p.get(dtype) for key, p in PEAK_TFLOPS if key in name), None)
        return DeviceInfo(kind, name, memory, peak, dtype, version, None)
    memory = _meminfo("MemTotal") or _sysconf_bytes("SC_PHYS_PAGES")
    threads = None
    if version is not None:
        import torch

        threads = torch.get_num_threads()
    return DeviceInfo(kind, _cpu_name(), memory, None, dtype, version, threads)


def free_bytes(kind: str) -> int | None:
    """Memory that a new allocation can use now on ``kind``, or None when unknown."""
    if kind == "cuda":
        import torch

        cached = torch.cuda.memory_reserved() - torch.cuda.memory_allocated()  # torch can reuse it
        return int(torch.cuda.mem_get_info()[0] + cached)
    return _meminfo("MemAvailable") or _sysconf_bytes("SC_AVPHYS_PAGES")


def _rss_status(key: str) -> int:
    with open("/proc/self/status") as f:
        found = re.search(rf"^{key}:\s+(\d+) kB", f.read(), re.M)
    if found is None:
        raise OSError(f"/proc/self/status has no {key}")
    return int(found.group(1)) * 1024


M_MMAP_THRESHOLD = -3  # glibc's mallopt parameter number
MMAP_THRESHOLD = 128 * 1024  # glibc's default, pinned


def settle_heap() -> None:
    """Make resident-set growth count every large buffer a call allocates (glibc only).

    glibc normally raises its mmap threshold after large frees and then serves later large
    buffers from memory the process already holds, which the resident set does not show. Pinning
    the threshold maps every buffer of 128 KiB or more fresh and returns it on free; trimming
    hands back what the heap keeps from earlier calls. Called before each reading, and before a
    sweep's first call: a threshold raised by the timed calls left the next reading short.
    """
    libc = ctypes.CDLL(None)
    mallopt, trim = getattr(libc, "mallopt", None), getattr(libc, "malloc_trim", None)
    if mallopt is not None:
        mallopt(M_MMAP_THRESHOLD, MMAP_THRESHOLD)
    if trim is not None:
        trim(0)


def _rss_growth(call: Callable[[], Any]) -> tuple[Any, int | None]:
    """Run ``call``; growth of the resident-set high-water mark (Linux), else None."""
    try:
        with open("/proc/self/clear_refs", "w") as f:
            settle_heap()
            f.write("5")  # resets the high-water mark VmHWM to the current RSS
        before = _rss_status("VmRSS")
    except OSError:
        return call(), None
    out = call()
    return out, max(0, _rss_status("VmHWM") - before)


def _cuda_peak(call: Callable[[], Any]) -> tuple[Any, int]:
    import torch

    torch.cuda.synchronize()
    torch.cuda.reset_peak_memory_stats()
    before = torch.cuda.memory_allocated()
    out = call()
    torch.cuda.synchronize()
    return out, max(0, torch.cuda.max_memory_allocated() - before)


def measure_peak(call: Callable[[], Any], kind: str) -> tuple[Any, int | None]:
    """Run ``call`` once; return its result and the memory it allocated beyond what existed.

    CUDA: torch.cuda.max_memory_allocated. CPU (numpy and torch alike): growth of the process's
    resident-set high-water mark (Linux only; None elsewhere). Not tracemalloc: on Python 3.11,
    stopping it while another thread allocates can crash the process (CPython gh-128679), and
    the app's UI thread draws with numpy while a benchmark runs.
    """
    if kind == "cuda":
        return _cuda_peak(call)
    return _rss_growth(call)


def synchronize(kind: str) -> None:
    """Wait for queued GPU work so a wall-clock reading covers it; nothing on the CPU."""
    if kind == "cuda":
        import torch

        torch.cuda.synchronize()
