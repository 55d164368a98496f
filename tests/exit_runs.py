"""Start the app in a fresh process with empty settings and leave it one way (exit tests, stress)."""

from __future__ import annotations

import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

from app.settings import APPLICATION, ORGANIZATION
from tests.waits import patience

ROOT = Path(__file__).resolve().parents[1]


@dataclass
class Exit:
    panel: str
    path: str
    code: int
    stderr: str
    saved_panel: str | None = None


def run(args: list[str], config_home: Path, root: Path = ROOT) -> subprocess.CompletedProcess:
    """``python ARGS`` in ``root``, offscreen, with its settings under ``config_home``."""
    env = dict(os.environ, QT_QPA_PLATFORM="offscreen", XDG_CONFIG_HOME=str(config_home))
    command = [sys.executable, *args]
    return subprocess.run(command, cwd=root, env=env, capture_output=True, text=True, timeout=patience(300))


def leave(key: str, path: str, config_home: Path, root: Path = ROOT) -> Exit:
    """Open panel ``key`` and leave by ``path`` (one of app.main.EXIT_PATHS) after the first paint."""
    from PySide6.QtCore import QSettings

    how = [] if path == "quit" else [path]  # the bare flag quits, in older versions too
    done = run(["-m", "app", "--panel", key, "--exit-after-paint", *how], config_home, root)
    ini = config_home / ORGANIZATION / f"{APPLICATION}.ini"
    saved = QSettings(str(ini), QSettings.Format.IniFormat).value("view/panel") if ini.exists() else None
    return Exit(key, path, done.returncode, done.stderr, saved)
