"""The architecture's one rule: core never imports Qt, pyqtgraph or app."""

import pkgutil
import subprocess
import sys
from pathlib import Path

import core

ROOT = Path(__file__).resolve().parents[2]


def test_core_imports_no_qt_and_no_app():
    modules = [f"core.{m.name}" for m in pkgutil.iter_modules(core.__path__)]
    code = (
        "import importlib, sys\n"
        f"for name in {modules!r}: importlib.import_module(name)\n"
        "bad = sorted(m for m in sys.modules if m.split('.')[0] in "
        "('PySide6', 'pyqtgraph', 'shiboken6', 'app'))\n"
        "print(','.join(bad))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True)
    assert len(modules) >= 5
    assert out.stdout.strip() == "", f"core pulled in: {out.stdout}"
