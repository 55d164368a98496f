"""``export-script``: a step's script from a terminal, in a lesson's state, and its refusals."""

import subprocess
import sys

import numpy as np

from app.main import main
from app.panels.qkv.state import QKVState, compute_qkv
from tests.app.test_export_scripts import printed_numbers, unprinted
from tests.waits import patience


def export(capsys, *argv) -> tuple[int, str]:
    code = main(["export-script", *argv])
    return code, capsys.readouterr().err


def run_script(path) -> str:
    done = subprocess.run([sys.executable, str(path)], capture_output=True, text=True, timeout=patience(120))
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_a_step_is_written_and_prints_what_it_computes(capsys, tmp_path, qapp):
    path = tmp_path / "softmax.py"
    code, err = export(capsys, "--panel", "qkv", "--step", "5", "-o", str(path))
    assert code == 0, err
    assert '"Q, K, V step by step", step 5: Softmax' in path.read_text(encoding="utf-8")
    weights = compute_qkv(QKVState()).trace.weights
    assert not unprinted(weights.ravel(), printed_numbers(run_script(path)))


def test_a_lessons_state_and_step_travel_into_the_script(capsys, tmp_path, qapp):
    from app import lesson_files
    from app.panels import PANELS

    panel = PANELS[0]()
    panel.tokens_edit.setText("a lesson about dogs")
    panel.set_step(2)
    lesson_files.save(tmp_path / "dogs.json", lesson_files.capture(panel, "Dogs"))
    path = tmp_path / "dogs.py"
    code, err = export(capsys, "--lesson", str(tmp_path / "dogs.json"), "-o", str(path))
    assert code == 0, err
    text = path.read_text(encoding="utf-8")
    assert "step 3: Scores" in text and "'a lesson about dogs'" in text
    scores = panel.live.result.trace.scores  # the table keeps rows drawn for earlier text
    assert not unprinted(scores.ravel(), printed_numbers(run_script(path)))


def test_a_lesson_for_another_panel_is_refused(capsys, tmp_path, qapp):
    from app import lesson_files
    from app.panels import PANELS

    lesson_files.save(tmp_path / "qkv.json", lesson_files.capture(PANELS[0](), ""))
    code, err = export(capsys, "--panel", "scale", "--lesson", str(tmp_path / "qkv.json"))
    assert code == 2 and "for the panel 'qkv', not 'scale'" in err


def test_the_script_reproduces_the_panel_not_the_defaults(capsys, tmp_path, qapp):
    """The same command twice over two lessons gives two different scripts and numbers."""
    from app import lesson_files
    from app.panels import PANELS

    outputs = []
    for seed in (0, 3):
        panel = PANELS[0]()
        panel.seed_spin.setValue(seed)
        lesson_files.save(tmp_path / f"{seed}.json", lesson_files.capture(panel, ""))
        path = tmp_path / f"{seed}.py"
        assert export(capsys, "--lesson", str(tmp_path / f"{seed}.json"), "-o", str(path))[0] == 0
        outputs.append(printed_numbers(run_script(path)))
    assert not np.array_equal(*outputs)
