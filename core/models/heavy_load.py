"""Import torch and a model's code in a background thread without stalling the other threads.

A thread that runs Python code hands the interpreter lock to the others every few milliseconds,
but two steps of a first model load keep it for hundreds of milliseconds, and the window freezes:

- Loading torch's native library (430 MB) runs its static initialisers, which register every
  operator, inside ``import torch``, with the lock held. ``preload_torch`` loads that library
  first through ``dlopen`` called from ctypes, which releases the lock; ``import torch`` then finds
  it loaded and only builds its Python bindings.
- Importing torch, transformers and a first model's code leaves 500,000 long-lived objects, and
  the garbage collector walks all of them in each full pass (0.1–0.6 s), whichever thread
  happens to trigger it, the UI thread included. ``run_frozen`` runs such an import with the
  collector paused and then freezes every object alive (``gc.freeze``), so later passes skip
  them.

Frozen objects are still freed when nothing refers to them, but a reference cycle among them is
never collected: the imports leave a few thousand such small objects (measured), among them
tracebacks of errors an import caught, which keep the frames they pass through alive for good,
with whatever those frames' variables hold once they return. So ``run_frozen`` runs its function
in a short-lived thread of its own, whose frames hold nothing of the caller's (a model loaded
afterwards stays collectable), and freezes only when the function left at least
``FREEZE_AFTER`` new objects: importing the code of a second kind of model freezes nothing.
Never use it to build something that is dropped later: a transformers model sits in a
reference cycle and would stay in memory for good.

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
from collections.abc import Callable
from contextlib import contextmanager
from pathlib import Path

# torch's core library: where its static initialisers run.
TORCH_LIBRARY = {"linux": "libtorch_cpu.so", "darwin": "libtorch_cpu.dylib"}
# New objects a call must leave to be frozen: torch's import leaves ~200,000, transformers and a
# first model's code ~300,000, the code of a second kind of model ~1,000 (measured).
FREEZE_AFTER = 50_000

_lock = threading.Lock()
_paused = 0  # calls inside _collector_paused, in all threads
_was_enabled = True  # the collector's state before the first of them began


@contextmanager
def _collector_paused():
    """No collection pass inside the block; afterwards, if it succeeded and left at least
    FREEZE_AFTER new objects, freeze every object alive. Blocks may run in several threads at
    once: the collector comes back when the last one ends."""
    global _paused, _was_enabled
    with _lock:
        if _paused == 0:
            _was_enabled = gc.isenabled()
            gc.disable()
        _paused += 1
        before = gc.get_count()[0]  # with the collector off: objects made minus objects freed
    ok = False
    try:
        yield
        ok = True
    finally:
        with _lock:
            _paused -= 1
            if ok and gc.get_count()[0] - before >= FREEZE_AFTER:
                gc.freeze()
            if _paused == 0 and _was_enabled:
                gc.enable()


def run_frozen(fn: Callable, *args):
    """``fn(*args)`` in a thread of its own with the collector paused; freeze what it built.

    The caller waits; ``fn``'s exception is raised again here, and then nothing is frozen. Not for
    use while importing a module (the import lock it holds could be the one ``fn`` waits for).
    """
    outcome: list = []

    def apart() -> None:
        try:
            with _collector_paused():
                outcome.append((True, fn(*args)))
        except BaseException as exc:  # handed to the caller, raised there
            outcome.append((False, exc))

    thread = threading.Thread(target=apart, name="heavy-load")
    thread.start()
    thread.join()
    ok, value = outcome[0]
    if not ok:
        raise value
    return value


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


def _preloaded_import(name: str):
    preload_torch()
    return importlib.import_module(name)


def quiet_import(name: str):
    """``importlib.import_module(name)``, the first time through ``preload_torch`` and
    ``run_frozen``."""
    if name not in sys.modules:
        run_frozen(_preloaded_import, name)
    return importlib.import_module(name)  # waits if another thread is still importing it
