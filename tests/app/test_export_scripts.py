"""Export as Python: every step of every panel exports a script that runs in a fresh interpreter
and prints the numbers the step draws (the decoder panels on a tiny random Llama)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np
import pyqtgraph as pg
import pytest
from PySide6.QtWidgets import QApplication, QListWidget, QTableWidget

from app import worker
from app.panels import PANELS
from app.widgets import Heatmap, MatrixView
from app.widgets.export import PLOT_HEADER, plot_rows
from app.widgets.head_grid import HeadGrid
from app.widgets.pattern_grid import PatternGrid
from tests.app.conftest import idle, settle
from tests.waits import patience

CHECKOUT = Path(__file__).resolve().parents[2]  # the scripts import this checkout's core
NUMBER = re.compile(r"[-+−]?(?:\d+\.?\d*|\.\d+)(?:e[-+]?\d+)?|[-+−]?inf")
# Panels whose plots are measurements (time, throughput, memory): a script measures again, so what
# it must print is what it measures at (the sweep's lengths, below).
MEASURED = {"bench": (64.0, 128.0)}
# Views that export as pictures only: tables (read as text, below) and grids of small images.
PICTURES = (QTableWidget, PatternGrid, HeadGrid)


def drawn_numbers(panel) -> np.ndarray:
    """Every finite number the step's views on screen show (matrices' cells, plots' y and values):
    the views the panel can export (``Panel.export``) that are visible at this step."""
    found = []
    for view in [v for v in panel.export().values() if v.isVisibleTo(panel)]:
        if isinstance(view, (Heatmap, MatrixView)):
            found.append(np.asarray(view.values, dtype=float).ravel())
        elif isinstance(view, pg.GraphicsView):
            y, value = PLOT_HEADER.index("y"), PLOT_HEADER.index("value")
            cells = [row[k] for row in plot_rows(view)[1:] for k in (y, value) if row[k] != ""]
            found.append(np.array([float(c) for c in cells]))
        elif not isinstance(view, PICTURES):  # the app's Export CSV could not read it either
            raise AssertionError(f"export() names a {type(view).__name__}, which holds no numbers")
    numbers = np.concatenate(found) if found else np.array([])
    return numbers[np.isfinite(numbers)]


PERCENT = re.compile(r"(\d+(?:\.\d+)?)\s?%")


def text_numbers(panel) -> list[tuple[float, float]]:
    """(value, half a unit of its last digit) of each number shown as text at this step: the
    cells of the tables on screen, and the percentages in the lists on screen (as fractions)."""
    found = []
    for table in (t for t in panel.findChildren(QTableWidget) if t.isVisibleTo(panel)):
        items = (table.item(r, c) for r in range(table.rowCount()) for c in range(table.columnCount()))
        for text in (i.text().strip().replace("−", "-") for i in items if i is not None):
            if NUMBER.fullmatch(text):
                found.append((float(text), 0.5 * 10.0 ** -len(text.partition(".")[2])))
    for box in (b for b in panel.findChildren(QListWidget) if b.isVisibleTo(panel)):
        for text in (box.item(k).text() for k in range(box.count())):
            for digits in PERCENT.findall(text):
                found.append((float(digits) / 100, 0.5 * 10.0 ** -len(digits.partition(".")[2]) / 100))
    return found


def untold(shown: list[tuple[float, float]], printed: np.ndarray) -> list[float]:
    """The numbers shown as text that no printed number rounds to, at the digits shown."""
    return [v for v, half in shown if not np.any(np.abs(printed - v) <= half + 1e-12)]


def printed_numbers(text: str) -> np.ndarray:
    return np.array(sorted(float(n.replace("−", "-")) for n in NUMBER.findall(text)))


def unprinted(drawn: np.ndarray, printed: np.ndarray) -> list[float]:
    """The drawn numbers no printed number matches to six significant digits."""
    if not len(printed):
        return sorted(set(drawn.tolist()))
    k = np.clip(np.searchsorted(printed, drawn), 1, len(printed) - 1)
    nearest = np.minimum(abs(printed[k - 1] - drawn), abs(printed[k] - drawn))
    if len(printed) == 1:
        nearest = abs(printed[0] - drawn)
    return sorted(set(drawn[nearest > 1e-6 + 1e-5 * abs(drawn)].tolist()))


def run_script(path: Path) -> subprocess.CompletedProcess:
    """Run the script ``path`` in a fresh interpreter, in its folder."""
    env = {**os.environ, "MPLBACKEND": "Agg", "HF_HUB_OFFLINE": "1", "PYTHONPATH": str(CHECKOUT)}
    command = [sys.executable, str(path)]
    return subprocess.run(
        command, cwd=path.parent, env=env, capture_output=True, text=True, timeout=patience(300)
    )


def run_scripts(paths) -> list[subprocess.CompletedProcess]:
    """Run each script in a fresh interpreter, all at once (the machine shares out its cores)."""
    with ThreadPoolExecutor(len(paths)) as pool:
        return list(pool.map(run_script, map(Path, paths)))


def open_panel(key: str, qtbot, llama_folder):
    entry = next(e for e in PANELS if e.key == key)
    panel = entry()
    qtbot.addWidget(panel)
    panel.resize(1200, 800)
    panel.show()
    if hasattr(panel, "use_model") and key != "model":
        settle(panel.use_model, llama_folder)
    idle(120)
    return panel


def sweep(panel) -> None:
    """Benchmark: a small sweep, so its plots have points."""
    panel.form.lengths_edit.setText(" ".join(str(int(n)) for n in MEASURED["bench"]))
    panel.form.select_impls(("numpy-naive",))
    settle(panel.run)


def train(panel) -> None:
    """Grow an induction head: a short seeded run of both models, away from the defaults, and a
    head knocked out."""
    panel.task.seed_spin.setValue(3)
    panel.task.length_spin.setValue(5)
    panel.settings.apply(steps=60, heads=2, length=16)
    settle(panel.train.start_button.click)
    settle(panel.one_layer.start_button.click)
    panel.knockout.layer_spin.setValue(1)
    settle(panel.knockout.head_spin.setValue, 2)


def recall(panel) -> None:
    """Linear attention: a short seeded training of the three recall models, away from the defaults."""
    panel.trained.live.apply(seed=2, pairs=2, length=16, vocab=64, batch=16, steps=20, every=10)
    settle(panel.trained.start)


def capacity(panel) -> None:
    """Memory: a two-trial capacity sweep under another seed."""
    panel.seed_spin.setValue(3)
    settle(panel.capacity.trials_spin.setValue, 2)  # the sweep runs when its step is shown


PROMPT = "the cat sat on the mat because the cat"  # the tiny model's words: " because", " the" are tokens


def knock(panel) -> None:
    """Inside a decoder: a pair the tiny model has, mean-ablation of one head, every head ranked, a
    longer induction test, and a tiny Gemma 3 opened once, for step 6 to compare with."""
    from tests.tiny_models import save_tiny_decoder

    llama = panel.row.model.source
    settle(panel.use_model, str(save_tiny_decoder(Path(llama).parent / "tiny-gemma", "gemma3_text")))
    settle(panel.use_model, llama)
    settle(panel.knock.prompt.setText, PROMPT)
    settle(panel.rank.target.setText, " because")
    settle(panel.rank.foil.setText, " the")
    settle(panel.lens.target.setText, " because")
    settle(panel.knock.mode.setCurrentIndex, 1)  # mean-ablation
    settle(panel.knock.grid.clicked.emit, 1, 2)
    settle(panel.rank.ranked.setChecked, True)  # every head ranked: step 2's map of drops
    settle(panel.induction.n.setValue, 6)
    settle(panel.induction.induction_map.clicked.emit, 1, 1)


def noise(panel) -> None:
    """Patching: a one-word change, the noising direction, one head chosen, the MLP grid estimated."""
    corrupt = PROMPT.replace(" on ", " in ")
    settle(panel.runs.apply, clean=PROMPT, corrupt=corrupt, target="the", foil="because")
    settle(panel.runs.direction.setCurrentIndex, 1)  # noise: corrupted activations into the clean run
    settle(panel.heads.choose, 1, 2)
    settle(panel.approx.what.setCurrentIndex, 2)  # MLP outputs


def cell(panel) -> None:
    """Inside a head: another head and cell, a pair the tiny model has, every head knocked out."""
    settle(panel.prompt.setText, PROMPT)
    settle(panel.live.apply, layer=2, head=3, query=0, key=3)
    settle(panel.live.apply, target=" because", foil=" the", knockout=True)


def steer(panel) -> None:
    """The residual stream: another token, layer 2's norm, the parts by kind; steering between two
    words the tiny model has, past where its text breaks down."""
    settle(panel.journey.live.apply, prompt=PROMPT, position=4, norm=2, group="kind")
    settle(panel.steer.live.apply, prompt="the cat sat on", plus=" cat", minus=" mat", layer=1, strength=2.5)
    settle(panel.steer.live.apply, new=8, reach=40.0, token=" the")


def atlas(panel) -> None:
    """Head atlas: short probes the tiny model reads, another head with the heads sharing its keys,
    sorted by the copying score, and another token read."""
    settle(panel.live.apply, text=PROMPT, length=6, seed=2, low=20, layer=2, head=3, score="copying")
    settle(
        panel.live.apply,
        together=True,
        colour="token",
        token=" the",
        answer=PROMPT,
        target=" because",
        foil=" the",
    )


def attribute(panel) -> None:
    """Which words mattered: a pair the tiny model has, one head, a token baseline, a token taken away."""
    settle(panel.live.apply, prompt=PROMPT, target=" because", foil=" the", layer=1, head=2)
    settle(panel.live.apply, steps=4, baseline=" it", removed=3, x="ig", y="rollout", settles=True)


def circuit(panel) -> None:
    """Circuits: a pair the tiny model has, EAP-IG in two steps, noising, six edges, one clicked."""
    corrupt = PROMPT.replace(" on ", " in ")
    settle(panel.live.apply, clean=PROMPT, corrupt=corrupt, target="the", foil="because", direction="noise")
    settle(panel.live.apply, method="eap-ig", steps=2, edges=6, edge=1)


def sample(panel) -> None:
    """Next token: the seed's draws at another temperature with a clicked token among them, and
    another layer in step 5 (drawn once first: its box then knows the layers)."""
    panel.temperature.temperature.setValue(3.0)
    panel.temperature.seed.setValue(7)
    settle(panel.writing.append_sample)
    settle(panel.writing.append_choice, 2)
    settle(panel.writing.append_sample)
    settle(panel.set_step, 4)
    settle(panel.groups.layer_spin.setValue, 2)


def words(panel) -> None:
    """Real model: other text, pieces joined into words, another head."""
    settle(panel.text_edit.setText, "The cat sat on the mat because it was tired.")
    settle(panel.page.words_box.setChecked, True)
    panel.select_head(4, 7)


# How each panel is set up before its steps are exported: away from the defaults, and with the runs
# that some steps show (a sweep, a training).
PREPARE = {
    "bench": sweep,
    "induction": train,
    "memory": capacity,
    "linear": recall,
    "inside_decoder": knock,
    "patching": noise,
    "inside_head": cell,
    "stream": steer,
    "atlas": atlas,
    "words": attribute,
    "circuits": circuit,
    "next_token": sample,
    "model": words,
}


def exported(panel, folder: Path, pool: ThreadPoolExecutor, measured=()) -> list[tuple]:
    """Each step of ``panel`` as it is now: (step, the numbers it draws, those it shows as text,
    its script's run), the scripts running in ``pool`` while the next steps are drawn. With
    ``measured``, the step's numbers are those points (its plots are measurements)."""
    steps = []
    for i in range(len(panel.steps)):
        settle(panel.set_step, i)
        QApplication.processEvents()
        drawn = np.array(measured) if measured else drawn_numbers(panel)
        path = folder / f"step{i + 1}.py"
        path.write_text(panel.script(i), encoding="utf-8")
        steps.append((i, drawn, [] if measured else text_numbers(panel), pool.submit(run_script, path)))
    assert worker.cancel_all(patience(60)), worker.running()
    return steps


def problems(key: str, step: int, drawn, shown, run: subprocess.CompletedProcess) -> list[str]:
    """What is wrong with one step's script, if anything."""
    where = f"{key} step {step + 1}"
    if run.returncode:
        return [f"{where} exits {run.returncode}: {run.stderr[-3000:]}"]
    if not (len(drawn) or shown):
        return [f"{where} draws no numbers to compare"]
    printed = printed_numbers(run.stdout)
    checks = (("numbers it draws", unprinted(drawn, printed)), ("numbers it shows", untold(shown, printed)))
    return [f"{where} does not print {what}: {values[:10]}" for what, values in checks if values]


@pytest.mark.slow
@pytest.mark.models  # the real-model panels
def test_every_step_of_every_panel_exports_a_script_that_prints_what_it_draws(qtbot, tmp_path, llama_folder):
    """65 steps, each panel set up away from its defaults (PREPARE); the scripts of one panel run
    while the next panels are drawn, a few interpreters at a time."""
    steps = []
    with ThreadPoolExecutor((os.cpu_count() or 2) + 1) as pool:
        for entry in PANELS:
            panel = open_panel(entry.key, qtbot, llama_folder)
            PREPARE.get(entry.key, lambda _: None)(panel)
            folder = tmp_path / entry.key
            folder.mkdir()
            measured = MEASURED.get(entry.key, ())
            steps += [(entry.key, *step) for step in exported(panel, folder, pool, measured)]
            panel.close()
        found = [p for key, *step, run in steps for p in problems(key, *step, run.result())]
    assert len(steps) == sum(len(e.steps) for e in PANELS)
    assert not found, "\n".join(found)


def test_the_comparison_catches_a_number_that_is_not_printed():
    printed = printed_numbers("the 0.375443 cat −1.5 and 2e-05")
    assert unprinted(np.array([0.3754431, -1.5, 2e-5]), printed) == []
    assert unprinted(np.array([0.3755, 7.0]), printed) == [0.3755, 7.0]


def test_an_edited_embedding_table_travels_with_the_script(qtbot, tmp_path):
    """The Q, K, V panel's table keeps hand edits and rows of earlier text: the script writes it out."""
    panel = open_panel("qkv", qtbot, None)  # a panel without a model
    panel.embeddings.x_view.edited.emit(0, 1, 9.5)  # as a double-click's edit does
    panel.tokens_edit.setText("the cat sat down again")
    path = tmp_path / "qkv.py"
    path.write_text(panel.script(0), encoding="utf-8")
    (run,) = run_scripts([path])
    assert run.returncode == 0, run.stderr
    assert 9.5 in panel.embeddings.x_view.values
    assert not unprinted(drawn_numbers(panel), printed_numbers(run.stdout))
