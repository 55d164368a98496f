"""The app's command line run as a user runs it: a fresh interpreter, offscreen, output captured."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from app.commands.progress import HEARTBEAT_LINE
from tests.waits import patience

ROOT = Path(__file__).resolve().parents[2]


def run_cli(*args: str) -> subprocess.CompletedProcess:
    """``python -m app ARGS`` from the project's root, stdout and stderr captured as text."""
    env = dict(os.environ, QT_QPA_PLATFORM="offscreen")
    return subprocess.run(
        [sys.executable, "-m", "app", *args],
        cwd=ROOT,
        capture_output=True,
        text=True,
        env=env,
        timeout=patience(300),
    )


def stages(text: str) -> list[str]:
    """The lines of ``text`` less the heartbeat's ("… (2 s)"), which a busy machine adds."""
    return [line for line in text.splitlines() if not HEARTBEAT_LINE.search(line)]
