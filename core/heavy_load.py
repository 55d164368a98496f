"""Import torch and load models in a background thread without stalling the other threads.

A thread that runs Python code hands the interpreter lock to the others every few milliseconds,
but two steps of a first model load keep it for hundreds of milliseconds, and the window freezes:

- Loading torch's native library (430 MB) runs its static initialisers, which register every
  operator, inside ``import torch``, with the lock held. ``preload_torch`` loads that library
  first through ``dlopen`` called from ctypes, which releases the lock; ``import torch`` then finds
  it loaded and only builds its Python bindings.
- Importing torch and transformers (and the modules a first model load brings in) leaves
  200,000–400,000 long-lived objects, and the garbage collector walks all of them in each full
  pass (0.1–0.6 s), whichever thread happens to trigger it, the UI thread included.
  ``collector_paused`` runs no pass while such a block runs and, when the block imported modules,
  freezes every object alive afterwards (``gc.freeze``), so later passes skip them. Frozen
  objects are still freed when nothing refers to them; only reference cycles among them stay
  (a few thousand small objects from the imports, measured).

    torch = quiet_import("torch")       # in the worker, before the first model load
"""

from __future__ import annotations

import ctypes
import gc
import importlib
import importlib.util
import os
import sys
import threading
from contextlib import contextmanager
from pathlib import Path

# torch's core library: where its static initialisers run.
TORCH_LIBRARY = {"linux": "libtorch_cpu.so", "darwin": "libtorch_cpu.dylib"}

_lock = threading.Lock()
_paused = 0  # blocks inside collector_paused, in all threads
_was_enabled = True  # the collector's state before the first of them began


@contextmanager
def collector_paused():
    """Run the block without garbage-collection passes; if it succeeds and imported modules,
    freeze every object alive.

    Blocks may nest and may run in several threads at once: the collector comes back when the
    last one ends. A block that imports nothing (a second model load) freezes nothing, so a model
    dropped later is collected as usual; nor does a block that raises (a traceback holding
    half-read weights).
    """
    global _paused, _was_enabled
    with _lock:
        if _paused == 0:
            _was_enabled = gc.isenabled()
            gc.disable()
        _paused += 1
    modules = len(sys.modules)
    ok = False
    try:
        yield
        ok = True
    finally:
        with _lock:
            _paused -= 1
            if ok and len(sys.modules) > modules:
                gc.freeze()
            if _paused == 0 and _was_enabled:
                gc.enable()


def torch_library() -> Path | None:
    """The file of torch's core library, found without importing torch (None where unknown)."""
    name = TORCH_LIBRARY.get(sys.platform)
    spec = importlib.util.find_spec("torch") if name else None
    if spec is None or not spec.submodule_search_locations:
        return None
    path = Path(spec.submodule_search_locations[0]) / "lib" / name
    return path if path.is_file() else None


def preload_torch() -> bool:
    """Load torch's core library with the interpreter lock released; True if it was loaded.

    Uses the flags the import of ``torch._C`` will use, so the import reuses this copy. Where the
    library is not found or does not load, nothing changes: ``import torch`` loads it as before.
    """
    if "torch" in sys.modules:
        return False
    path = torch_library()
    if path is None:
        return False
    dlopen = ctypes.CDLL(None).dlopen  # a ctypes call: the lock is released while it runs
    dlopen.restype, dlopen.argtypes = ctypes.c_void_p, (ctypes.c_char_p, ctypes.c_int)
    return bool(dlopen(os.fsencode(path), sys.getdlopenflags()))


def quiet_import(name: str):
    """``importlib.import_module(name)`` after ``preload_torch``, with the collector paused."""
    if name not in sys.modules:
        with collector_paused():
            preload_torch()
            importlib.import_module(name)
    return importlib.import_module(name)  # waits if another thread is still importing it
