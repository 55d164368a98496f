"""docs/architecture.md's worked example, run as written: its four files of a Softmax panel are
written into a package beside the app's panels; the panel is built, driven and its step exported
and run."""

import os
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from tests.waits import patience

ROOT = Path(__file__).resolve().parents[1]
DOC = ROOT / "docs" / "architecture.md"
FILE_BLOCK = re.compile(r"```python\n# (app/panels/softmax/\w+\.py)\n(.*?)```", re.DOTALL)


@pytest.fixture
def softmax_package(tmp_path, monkeypatch):
    """The worked example's files under tmp_path, importable as app.panels.softmax, with its
    entry in PANELS."""
    import app.panels
    from app.panels import PanelEntry

    files = FILE_BLOCK.findall(DOC.read_text(encoding="utf-8"))
    names = [Path(path).name for path, _ in files]
    assert sorted(names) == ["__init__.py", "scripts.py", "state.py", "weights.py"]
    for path, code in files:
        (tmp_path / path).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / path).write_text(code, encoding="utf-8")
    monkeypatch.setattr(app.panels, "__path__", [*app.panels.__path__, str(tmp_path / "app" / "panels")])
    entry = PanelEntry("softmax", "Softmax", "app.panels.softmax:SoftmaxPanel")
    monkeypatch.setattr(app.panels, "PANELS", [*app.panels.PANELS, entry])
    yield
    for name in [m for m in sys.modules if m.startswith("app.panels.softmax")]:
        del sys.modules[name]


def test_the_worked_example_is_a_panel_that_works(softmax_package, qtbot, tmp_path):
    from app.panels.softmax import SoftmaxPanel
    from app.panels.softmax.state import SoftmaxState, compute_softmax

    with pytest.raises(ValueError, match="above 0"):
        compute_softmax(SoftmaxState(temperature=0.0))
    panel = SoftmaxPanel()
    qtbot.addWidget(panel)
    panel.show()
    assert panel.title == "Softmax"
    page = panel.weights
    page.temperature.setValue(0.05)
    assert page.state.temperature == 0.05 and page.notice == ("Nearly one-hot.", "info")
    page.temperature.setValue(0.0)  # refused: the state and the drawing stay
    assert page.state.temperature == 0.05
    page.temperature.setValue(2.0)
    assert page.notice is None
    panel.exercise()

    path = tmp_path / "softmax_step1.py"
    path.write_text(panel.script(0), encoding="utf-8")
    env = {**os.environ, "MPLBACKEND": "Agg", "PYTHONPATH": str(ROOT)}
    done = subprocess.run(
        [sys.executable, str(path)],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=patience(60),
    )
    assert done.returncode == 0, done.stderr
    printed = [float(x) for x in done.stdout.split("weights:")[1].split()]
    np.testing.assert_allclose(printed, compute_softmax(page.state), rtol=1e-5)


@pytest.mark.models
def test_the_runs_example_runs_as_written(tmp_path, capsys):
    """The section on the run: its example on a tiny random Llama (2 layers, hidden 32)."""
    pytest.importorskip("torch")
    from core.models import load_model
    from tests.tiny_models import save_tiny_llama

    (code,) = re.findall(
        r"```python\n(# a cache, an edit and a gradient.*?)```", DOC.read_text(encoding="utf-8"), re.DOTALL
    )
    model = load_model(str(save_tiny_llama(tmp_path / "llama")))
    namespace = {"model": model}
    exec(compile(code, "docs/architecture.md", "exec"), namespace)
    ids = namespace["ids"]
    assert capsys.readouterr().out.split("\n")[-2] == f"(1, {len(ids)}, 300) (1, {len(ids)}, 32)"
    steered, clean = namespace["steered"].logits, namespace["clean"].logits
    assert (steered - clean).abs().max() > 1e-3  # the added stream changed the prediction
