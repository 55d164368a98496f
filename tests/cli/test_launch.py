"""Opening the window where Qt cannot: one line naming what to do and exit code 2, never Qt's
abort (SIGABRT and a page of text)."""

import os
import shutil
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from app import qt_platform
from tests.waits import patience

ROOT = Path(__file__).resolve().parents[2]
pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the check is for Linux")
DISPLAY_VARIABLES = ("DISPLAY", "WAYLAND_DISPLAY", "QT_QPA_PLATFORM", "XDG_SESSION_TYPE")


def launch(**env):
    """``attention-lab --exit-after-paint`` in a fresh process with only ``env`` for the display."""
    base = {k: v for k, v in os.environ.items() if k not in DISPLAY_VARIABLES}
    return subprocess.run(
        [sys.executable, "-m", "app", "--exit-after-paint"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        env=base | env,
        timeout=patience(120),
    )


def one_line_refusal(out) -> str:
    assert out.returncode == 2, (out.returncode, out.stderr[-2000:])  # not -6 (SIGABRT)
    lines = out.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("attention-lab: error: "), out.stderr
    return lines[0]


def test_no_display_says_how_to_run_headless():
    line = one_line_refusal(launch())
    assert "DISPLAY is not set" in line and "QT_QPA_PLATFORM=offscreen" in line


def test_a_display_nobody_answers_is_one_line():
    line = one_line_refusal(launch(DISPLAY=":4917"))
    # Where Qt's X libraries are installed the connection fails; where not, they are named first.
    assert "cannot connect to the X display :4917" in line or "apt-get install" in line


def test_offscreen_needs_no_display(monkeypatch):
    for name in DISPLAY_VARIABLES:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("QT_QPA_PLATFORM", "offscreen")
    assert qt_platform.why_no_window() is None
    monkeypatch.setenv("QT_QPA_PLATFORM", "xcb")
    assert "DISPLAY is not set" in qt_platform.why_no_window()


def test_missing_x_libraries_are_named_with_their_packages(monkeypatch):
    """As on a fresh Debian 12: the xcb plugin loads only once libxcb-icccm4 and libxcb-keysyms1
    are installed."""
    missing = {"libxcb-icccm.so.4", "libxcb-keysyms.so.1"}
    real = qt_platform.ctypes.CDLL

    def cdll(name, *args, **kwargs):
        if name.endswith("libqxcb.so"):
            raise OSError("libxcb-icccm.so.4: cannot open shared object file: No such file or directory")
        if name in missing:
            raise OSError(f"{name}: cannot open shared object file: No such file or directory")
        return real(name, *args, **kwargs)

    monkeypatch.setattr(qt_platform.ctypes, "CDLL", cdll)
    monkeypatch.setattr(qt_platform, "plugin", lambda name: Path(f"/qt/plugins/platforms/libq{name}.so"))
    monkeypatch.setenv("DISPLAY", ":0")
    monkeypatch.delenv("QT_QPA_PLATFORM", raising=False)
    monkeypatch.delenv("WAYLAND_DISPLAY", raising=False)
    monkeypatch.delenv("XDG_SESSION_TYPE", raising=False)
    line = qt_platform.why_no_window()
    assert "libxcb-icccm.so.4, libxcb-keysyms.so.1 are missing" in line
    assert (
        "sudo apt-get install libxcb-icccm4 libxcb-keysyms1 " in line and "QT_QPA_PLATFORM=offscreen" in line
    )


def free_display() -> int:
    return next(n for n in range(99, 200) if not Path(f"/tmp/.X11-unix/X{n}").exists())


@pytest.mark.skipif(shutil.which("Xvfb") is None, reason="needs Xvfb (apt-get install xvfb)")
def test_a_real_x_server_paints_or_names_what_is_missing():
    number = free_display()
    server = subprocess.Popen(
        ["Xvfb", f":{number}", "-screen", "0", "1600x1000x24", "-nolisten", "tcp"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + patience(10)
        while not Path(f"/tmp/.X11-unix/X{number}").exists() and time.monotonic() < deadline:
            time.sleep(0.05)
        with socket.socket(socket.AF_UNIX) as s:
            s.connect(f"/tmp/.X11-unix/X{number}")  # the server is up
        out = launch(DISPLAY=f":{number}")
        if out.returncode == 0:
            assert "first paint at" in out.stdout, out.stderr
        else:
            assert "apt-get install" in one_line_refusal(out)
    finally:
        server.terminate()
        server.wait(patience(10))
