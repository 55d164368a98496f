"""The rules docs/architecture.md states, checked: the import layers (import-linter's contracts in
pyproject.toml, each shown to bite), one page skeleton, one place that holds Qt signals, and
module sizes."""

import importlib
import inspect
import pkgutil
import re
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from tests.waits import patience

ROOT = Path(__file__).resolve().parents[1]
LINT = Path(sys.executable).with_name("lint-imports")
PANEL_LINES = 250  # a module of a panel's package
APP_LINES = 450  # any other module of the app

# One forbidden import per contract, each breaking that contract alone:
# contract -> (module, the line added to it, what the report then says).
BREAKS = {
    "core never imports the app, Qt or pyqtgraph": (
        "core/printing.py", "import app.worker", "core.printing -> app.worker"
    ),
    "core's packages import one another without a cycle": (
        "core/maths/stats.py", "import core.lab.settings", ".maths -> .lab"
    ),
    "the article maths, the toy model and the benchmark know nothing of real decoders": (
        "core/bench/device.py", "import core.interp.lens", "core.bench.device -> core.interp.lens"
    ),
    "the analyses reach a model only through the model layer, never where it comes from": (
        "core/interp/sinks.py", "import core.models.gemma3", "core.interp.sinks -> core.models.gemma3"
    ),
    "the article maths is NumPy only": (
        "core/maths/attention.py", "import torch", "core.maths.attention -> torch"
    ),
    "only the model layer and the loaders import transformers": (
        "core/interp/lens.py", "import transformers", "core.interp.lens -> transformers"
    ),
    "panels never import each other": (
        "app/panels/qkv/state.py", "import app.panels.scale.state", "app.panels.qkv.state -> app.panels.scale"
    ),
    "commands never import a panel's package": (
        "app/commands/predict.py", "import app.panels.model.state", "app.commands.predict -> app.panels.model"
    ),
}  # fmt: skip


def lint_imports(root: Path) -> subprocess.CompletedProcess:
    return subprocess.run(
        [str(LINT), "--no-cache"], cwd=root, capture_output=True, text=True, timeout=patience(120)
    )


def contract_lines(report: str) -> dict[str, str]:
    """Contract name -> KEPT or BROKEN, from lint-imports' summary (a long name may wrap)."""
    flat = " ".join(report.split())
    return {
        name: verdict
        for name in BREAKS
        for verdict in ("KEPT", "BROKEN")
        if re.search(rf"{re.escape(name)} ?{verdict}", flat)
    }


@pytest.fixture(scope="module")
def linter():
    if not LINT.exists():
        pytest.skip("import-linter (the dev extra) is not installed")
    return LINT


def test_every_contract_holds(linter):
    done = lint_imports(ROOT)
    assert done.returncode == 0, done.stdout[-3000:]
    assert contract_lines(done.stdout) == dict.fromkeys(BREAKS, "KEPT")


def test_each_contract_bites(linter, tmp_path):
    """A copy of the source with one forbidden import added per contract: every contract breaks,
    and each report names the module that broke it."""
    for package in ("core", "app"):
        shutil.copytree(ROOT / package, tmp_path / package, ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(ROOT / "pyproject.toml", tmp_path)
    for path, line, _ in BREAKS.values():
        with (tmp_path / path).open("a", encoding="utf-8") as module:
            module.write(f"\n{line}  # noqa\n")
    done = lint_imports(tmp_path)
    assert done.returncode == 1, done.stdout[-3000:]
    assert contract_lines(done.stdout) == dict.fromkeys(BREAKS, "BROKEN")
    for _, _, said in BREAKS.values():
        assert said in done.stdout, said


def test_the_panel_contracts_name_every_panel():
    """Both panel contracts list exactly the packages of PANELS: a new panel cannot escape them."""
    from app.panels import PANELS

    packages = sorted(".".join(entry.target.split(":")[0].split(".")[:3]) for entry in PANELS)
    contracts = {
        c["name"]: c
        for c in tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["importlinter"]["contracts"]
    }
    assert sorted(contracts["panels never import each other"]["modules"]) == packages
    assert sorted(contracts["commands never import a panel's package"]["forbidden_modules"]) == packages


def lays_out(cls: type) -> bool:
    """Whether ``cls``'s own __init__ calls layout_with."""
    init = vars(cls).get("__init__")
    return inspect.isfunction(init) and "layout_with(" in inspect.getsource(init)


def test_every_step_page_is_laid_out_by_layout_with():
    """Every page class a panel shows (a Step subclass with none of its own) builds its page with
    Step.layout_with, in its own __init__ or a base class's."""
    import app.panels
    from app.panels.step import Step

    for module in pkgutil.walk_packages(app.panels.__path__, "app.panels."):
        importlib.import_module(module.name)
    pages, seen = [], [Step]
    while seen:
        cls = seen.pop()
        seen += cls.__subclasses__()
        if not cls.__subclasses__() and cls.__module__.startswith("app.panels."):  # not a test's
            pages.append(cls)
    assert len(pages) > 50
    unlaid = [cls.__qualname__ for cls in pages if not any(map(lays_out, cls.__mro__))]
    assert unlaid == []


def test_only_quiet_holds_signals():
    """Every control changed without its signal goes through app/widgets/quiet.py."""
    found = [
        f"{path.relative_to(ROOT)}:{n}"
        for path in sorted((ROOT / "app").rglob("*.py"))
        if path.name != "quiet.py" or path.parent.name != "widgets"
        for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        if re.search(r"blockSignals|QSignalBlocker", line)
    ]
    assert found == []


# Background work of a panel's own, beside its Live: the shared modules that run it are named here.
OWN_MACHINERY = r"QTimer|time\.sleep|run_task|Newest\(|threading\.Thread|QThread"
SHARED = {"step.py", "model_row.py", "model_add.py"}  # the Live, a model's load and its add


def test_no_panel_keeps_a_timer_a_thread_or_a_task_of_its_own():
    """A panel's long work is a Live's compute (app/panels/step.py): partial results, pause and
    cancel as state changes."""
    found = [
        f"{path.relative_to(ROOT)}:{n}"
        for path in sorted((ROOT / "app" / "panels").rglob("*.py"))
        if not (path.parent.name == "panels" and path.name in SHARED)
        for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        if re.search(OWN_MACHINERY, line)
    ]
    assert found == []


def test_modules_stay_small():
    too_long = []
    for path in sorted((ROOT / "app").rglob("*.py")):
        in_panel = path.parent.parent == ROOT / "app" / "panels"
        limit = PANEL_LINES if in_panel else APP_LINES
        lines = len(path.read_text(encoding="utf-8").splitlines())
        if lines > limit:
            too_long.append(f"{path.relative_to(ROOT)}: {lines} lines > {limit}")
    assert too_long == []
