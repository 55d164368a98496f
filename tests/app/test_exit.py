"""The app ends with exit 0, nothing on stderr and its settings saved, whichever way it is left.

Every panel in PANELS is opened in its own process and left through the exit paths in rotation
(window close, Ctrl+Q, File → Quit, QApplication.quit(), SIGINT, SIGTERM), ROUNDS times, so each
panel is left by several paths and each path is taken on several panels; the smoke command and a
perf script (both build panels without the app's own exit) must end with exit 0 as well. The
processes run a few at a time. tests/perf/exit_stress.py repeats this many more times.
"""

from __future__ import annotations

import os
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from app.main import EXIT_PATHS
from app.panels import PANELS
from app.qt_messages import PLATFORM_NOISE
from tests.exit_runs import Exit, leave, run

pytestmark = pytest.mark.skipif(
    sys.platform != "linux", reason="signals and the settings folder (XDG_CONFIG_HOME) as on Linux"
)

ROUNDS = 2
KEYS = [cls.key for cls in PANELS]
# Built without the app's own ending: the smoke command, and a perf script that makes a panel alone.
OTHERS = {
    "smoke": ["-m", "app", "smoke", "--panel", "scale", "--panel", "masks"],
    "masks perf": ["-m", "tests.perf.masks_perf", "2"],
}


def rotation(keys: list[str], rounds: int = ROUNDS) -> list[tuple[str, str]]:
    """(panel, exit path) pairs: each round shifts the paths by one, so each panel meets new ones."""
    return [
        (key, EXIT_PATHS[(number + r) % len(EXIT_PATHS)])
        for r in range(rounds)
        for number, key in enumerate(keys)
    ]


def job(name: str, path: str, config_home: Path) -> Exit:
    if name in OTHERS:
        done = run(OTHERS[name], config_home)
        return Exit(name, path, done.returncode, done.stderr)
    return leave(name, path, config_home)


@pytest.fixture(scope="module")
def exits(tmp_path_factory) -> list[Exit]:
    """Every run of this module, a few processes at a time."""
    jobs = rotation(KEYS) + [(name, "") for name in OTHERS]
    folders = [tmp_path_factory.mktemp("settings") for _ in jobs]
    with ThreadPoolExecutor(min(4, os.cpu_count() or 2)) as pool:
        return list(pool.map(lambda j, folder: job(*j, folder), jobs, folders))


def test_rotation_takes_every_path_and_several_per_panel():
    pairs = rotation(KEYS)
    assert {path for _, path in pairs} == set(EXIT_PATHS)
    for key in KEYS:
        paths = [path for k, path in pairs if k == key]
        assert len(paths) == len(set(paths)) == ROUNDS


@pytest.mark.parametrize("key", KEYS)
def test_panel_exits_cleanly_every_way(exits, key):
    for done in (e for e in exits if e.panel == key):
        assert (done.code, done.stderr) == (0, ""), f"{key} left by {done.path}"
        assert done.saved_panel == key, f"{key} left by {done.path}: settings not saved"


@pytest.mark.parametrize("path", EXIT_PATHS)
def test_exit_path_is_clean_on_every_panel_it_took(exits, path):
    taken = [e for e in exits if e.path == path]
    assert taken
    assert [(e.panel, e.code, e.stderr) for e in taken] == [(e.panel, 0, "") for e in taken]


def test_smoke_exits_cleanly(exits):
    (smoke,) = (e for e in exits if e.panel == "smoke")
    assert (smoke.code, smoke.stderr) == (0, "")


def test_perf_script_exits_cleanly(exits):
    (perf,) = (e for e in exits if e.panel == "masks perf")
    # A perf script is not the app: Qt's offscreen platform notice is printed there as it is.
    assert perf.code == 0 and set(perf.stderr.splitlines()) <= set(PLATFORM_NOISE), perf.stderr
