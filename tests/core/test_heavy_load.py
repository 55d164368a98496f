"""core.heavy_load: the collector pauses during a heavy block and freezes what a good one built."""

from __future__ import annotations

import gc
import subprocess
import sys
import threading
from pathlib import Path
from types import ModuleType

import pytest

from core import heavy_load

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(autouse=True)
def collector_restored():
    enabled = gc.isenabled()
    yield
    gc.unfreeze()  # the frozen objects of this test process go back to the collector
    if enabled:
        gc.enable()
    else:
        gc.disable()


def test_no_collection_runs_inside_and_the_survivors_are_frozen():
    gc.enable()
    gc.unfreeze()
    passes = []

    def count(phase, info):
        if phase == "start":
            passes.append(info["generation"])

    gc.callbacks.append(count)
    try:
        with heavy_load.collector_paused():
            assert not gc.isenabled()
            built = [[i] for i in range(50_000)]  # enough new objects to trigger several passes
            sys.modules["imported_while_paused"] = ModuleType("imported_while_paused")
        assert passes == []
    finally:
        gc.callbacks.remove(count)
    del sys.modules["imported_while_paused"]
    assert gc.isenabled()
    assert gc.get_freeze_count() >= len(built)


def test_a_block_that_imports_nothing_freezes_nothing():
    gc.enable()
    gc.unfreeze()
    with heavy_load.collector_paused():
        built = [[i] for i in range(1000)]
    assert gc.isenabled() and gc.get_freeze_count() == 0 and built


def test_a_failed_block_freezes_nothing_and_the_collector_comes_back():
    gc.enable()
    gc.unfreeze()
    with pytest.raises(ValueError), heavy_load.collector_paused():
        sys.modules["imported_while_paused"] = ModuleType("imported_while_paused")
        raise ValueError("damaged weights")
    del sys.modules["imported_while_paused"]
    assert gc.isenabled() and gc.get_freeze_count() == 0


def test_nested_and_parallel_blocks_keep_it_paused_until_the_last_ends():
    gc.enable()
    inner_started, outer_may_end = threading.Event(), threading.Event()

    def other_thread():
        with heavy_load.collector_paused():
            inner_started.set()
            outer_may_end.wait(10)

    with heavy_load.collector_paused():
        with heavy_load.collector_paused():
            pass
        assert not gc.isenabled()  # the nested block ended, this one goes on
        thread = threading.Thread(target=other_thread)
        thread.start()
        inner_started.wait(10)
    assert not gc.isenabled()  # the other thread's block still runs
    outer_may_end.set()
    thread.join(10)
    assert gc.isenabled()


def test_a_collector_switched_off_by_the_caller_stays_off():
    gc.disable()
    with heavy_load.collector_paused():
        pass
    assert not gc.isenabled()


def test_quiet_import_returns_the_module():
    assert heavy_load.quiet_import("json") is sys.modules["json"]


@pytest.mark.skipif(sys.platform not in heavy_load.TORCH_LIBRARY, reason="no known library name here")
def test_torch_library_is_found_without_importing_torch():
    pytest.importorskip("torch")
    path = heavy_load.torch_library()
    assert path is not None and path.name == heavy_load.TORCH_LIBRARY[sys.platform] and path.is_file()
    assert heavy_load.preload_torch() is False  # torch is imported in this process: nothing to do


@pytest.mark.skipif(sys.platform not in heavy_load.TORCH_LIBRARY, reason="no known library name here")
def test_torch_imports_and_runs_after_its_library_was_preloaded():
    pytest.importorskip("torch")
    code = (
        "import sys\n"
        "from core import heavy_load\n"
        "assert heavy_load.preload_torch() and 'torch' not in sys.modules\n"
        "torch = heavy_load.quiet_import('torch')\n"
        "print(torch.arange(4.0).sum().item())\n"
    )
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["6.0"]
