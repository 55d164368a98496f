"""The architecture's one rule: core never imports Qt, pyqtgraph or app; and torch, an optional
extra, only where a module is about a torch model."""

import importlib.util
import pkgutil
import subprocess
import sys
from pathlib import Path

import pytest

import core
from tests.waits import patience

ROOT = Path(__file__).resolve().parents[2]
MODULES = [m.name for m in pkgutil.walk_packages(core.__path__, "core.")]  # packages' modules too
# The modules that are a torch model or its training: they import torch at the top by design.
TORCH_ONLY = {"core.lab.model", "core.lab.recall_task", "core.lab.training"}
HAS_TORCH = importlib.util.find_spec("torch") is not None


def test_core_imports_no_qt_and_no_app():
    modules = MODULES if HAS_TORCH else [m for m in MODULES if m not in TORCH_ONLY]
    _assert_no_qt(modules, ("PySide6", "pyqtgraph", "shiboken6", "app"))
    assert len(modules) >= 5


def test_core_imports_without_torch():
    """The lite install (no 'models' extra) imports every other core module: torch, transformers
    and safetensors are imported inside the functions that need them. Checked with those packages
    hidden, so a full install checks it too."""
    assert set(MODULES) >= TORCH_ONLY, "a module in TORCH_ONLY was renamed"
    hidden = ("torch", "transformers", "safetensors")
    code = (
        "import importlib, sys\n"
        f"for name in {hidden!r}: sys.modules[name] = None\n"  # import then raises ImportError
        f"for name in {sorted(set(MODULES) - TORCH_ONLY)!r}: importlib.import_module(name)\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=patience(120)
    )
    assert out.returncode == 0, f"a core module needs an optional package at import:\n{out.stderr[-2000:]}"


def test_panel_states_import_no_qt():
    """A panel's state.py is as headless as core: scriptable from a notebook, testable without Qt.
    Each is loaded on its own, without its package's __init__ (which builds the Qt panel)."""
    states = sorted(ROOT.glob("app/panels/*/state.py"))
    assert states, "no panel has a state.py"
    loads = "".join(
        f"spec = importlib.util.spec_from_file_location('{path.parent.name}_state', {str(path)!r})\n"
        "sys.modules[spec.name] = module = importlib.util.module_from_spec(spec)\n"
        "spec.loader.exec_module(module)\n"
        for path in states
    )
    _assert_no_qt([], ("PySide6", "pyqtgraph", "shiboken6", "app"), loads)


def _assert_no_qt(modules: list[str], banned: tuple[str, ...], extra: str = "") -> None:
    code = (
        "import importlib, importlib.util, sys\n"
        f"for name in {modules!r}: importlib.import_module(name)\n"
        + extra
        + f"bad = sorted(m for m in sys.modules if m.split('.')[0] in {banned!r})\n"
        "print(','.join(bad))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
        timeout=patience(120),
    )
    assert out.stdout.strip() == "", f"{modules or 'the panel states'} pulled in: {out.stdout}"


def test_the_analyses_load_no_model_machinery():
    """Importing every analysis loads of core.models only its package face and the type module
    (kinds): never the loaders, the registry or the libraries."""
    analyses = [m for m in MODULES if m.startswith("core.interp")]
    code = (
        "import importlib, sys\n"
        f"for name in {analyses!r}: importlib.import_module(name)\n"
        "print(sorted(m for m in sys.modules if m.startswith('core.models')))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=patience(120)
    )
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.split("\n")[0] == "['core.models', 'core.models.kinds']"


def test_the_models_face_reads_each_name_from_its_module():
    from core import models
    from core.models import loading, registry

    assert models.load_model is loading.load_model and models.BUNDLED is registry.BUNDLED
    assert all(getattr(models, name) is not None for name in models.__all__)
    with pytest.raises(AttributeError, match="no_such_name"):
        models.no_such_name  # noqa: B018
