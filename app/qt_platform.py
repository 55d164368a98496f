"""Can Qt open a window here? Checked before the QApplication is made: when no platform plugin
starts, Qt aborts the process (SIGABRT) with a page of text that misnames what is missing.

Only Linux is checked (X11 through Qt's xcb plugin, and Wayland); the check loads the plugin Qt
would load and connects to the X server once: a few milliseconds.
"""

from __future__ import annotations

import ctypes
import os
import re
import sys
from pathlib import Path

# The system libraries Qt 6's xcb plugin (and the Qt GUI library under it) loads, with the Debian
# and Ubuntu package of each: ``ldd`` of PySide6's Qt/plugins/platforms/libqxcb.so lists them.
XCB_PACKAGES = {
    "libxcb-cursor.so.0": "libxcb-cursor0",
    "libxcb-icccm.so.4": "libxcb-icccm4",
    "libxcb-keysyms.so.1": "libxcb-keysyms1",
    "libxcb-image.so.0": "libxcb-image0",
    "libxcb-render-util.so.0": "libxcb-render-util0",
    "libxcb-util.so.1": "libxcb-util1",
    "libxcb-randr.so.0": "libxcb-randr0",
    "libxcb-shape.so.0": "libxcb-shape0",
    "libxcb-shm.so.0": "libxcb-shm0",
    "libxcb-sync.so.1": "libxcb-sync1",
    "libxcb-xfixes.so.0": "libxcb-xfixes0",
    "libxcb-render.so.0": "libxcb-render0",
    "libxcb-xkb.so.1": "libxcb-xkb1",
    "libxcb.so.1": "libxcb1",
    "libX11-xcb.so.1": "libx11-xcb1",
    "libX11.so.6": "libx11-6",
    "libxkbcommon-x11.so.0": "libxkbcommon-x11-0",
    "libxkbcommon.so.0": "libxkbcommon0",
    "libEGL.so.1": "libegl1",
    "libGL.so.1": "libgl1",
    "libfontconfig.so.1": "libfontconfig1",
    "libfreetype.so.6": "libfreetype6",
    "libglib-2.0.so.0": "libglib2.0-0",
    "libdbus-1.so.3": "libdbus-1-3",
}
WAYLAND_PACKAGES = {
    "libwayland-client.so.0": "libwayland-client0",
    "libwayland-cursor.so.0": "libwayland-cursor0",
}
DEBIAN_PACKAGES = XCB_PACKAGES | WAYLAND_PACKAGES
HEADLESS = "or set QT_QPA_PLATFORM=offscreen to run headless"
MISSING_LIBRARY = re.compile(r"(lib[\w.+-]+\.so[\d.]*): cannot open shared object file")


def why_no_window() -> str | None:
    """One line saying why Qt cannot start a window platform here and what to do, or None when
    it can (or when this cannot be told: another system, a platform other than X11 or Wayland)."""
    if not sys.platform.startswith("linux"):
        return None
    try:
        import PySide6.QtGui  # noqa: F401  (Qt's GUI library needs EGL, OpenGL, fontconfig…)
    except ImportError as error:
        missing = MISSING_LIBRARY.findall(str(error))
        if not missing:
            raise
        return cannot_load("GUI library", missing, headless=False)
    requested = [name.partition(":")[0].strip() for name in os.environ.get("QT_QPA_PLATFORM", "").split(";")]
    names = [name for name in requested if name] or default_platforms()
    problems = []
    for name in names:
        if name == "xcb":
            problem = xcb_problem()
        elif name.startswith("wayland"):
            problem = wayland_problem()
        else:
            return None  # offscreen, minimal, vnc, eglfs…: Qt's own business
        if problem is None:
            return None
        problems.append(problem)
    return problems[-1]  # the last one tried (X11 unless only Wayland was asked for)


def default_platforms() -> list[str]:
    """What Qt 6 tries on Linux when QT_QPA_PLATFORM is not set: Wayland first in a Wayland session."""
    wayland = os.environ.get("WAYLAND_DISPLAY") or os.environ.get("XDG_SESSION_TYPE") == "wayland"
    return ["wayland", "xcb"] if wayland else ["xcb"]


def plugin(name: str) -> Path | None:
    """The platform plugin file Qt would load for ``name`` ("xcb", "wayland"), if it is found."""
    from PySide6.QtCore import QLibraryInfo

    folders = [os.environ.get("QT_QPA_PLATFORM_PLUGIN_PATH", "")]
    folders.append(str(Path(QLibraryInfo.path(QLibraryInfo.LibraryPath.PluginsPath)) / "platforms"))
    files = (Path(folder) / f"libq{name}.so" for folder in folders if folder)
    return next((path for path in files if path.is_file()), None)


def missing_libraries(path: Path | None, needed: dict[str, str]) -> list[str]:
    """The system libraries that stop the library at ``path`` from loading (none when it loads):
    the one the loader names, and every one of ``needed`` that does not load either."""
    if path is None:
        return []
    try:
        ctypes.CDLL(str(path))
    except OSError as error:
        found = MISSING_LIBRARY.findall(str(error))
        for soname in needed:
            try:
                ctypes.CDLL(soname)
            except OSError:
                found.append(soname)
        return list(dict.fromkeys(found)) or [str(error)]
    return []


def cannot_load(what: str, sonames: list[str], headless: bool = True) -> str:
    """Qt's ``what`` cannot load: which libraries are missing, and the packages that hold them."""
    packages = [DEBIAN_PACKAGES[s] for s in sonames if s in DEBIAN_PACKAGES]
    advice = f"; on Debian or Ubuntu: sudo apt-get install {' '.join(packages)}" if packages else ""
    verb = "is" if len(sonames) == 1 else "are"
    tail = f" ({HEADLESS})" if headless else ""
    return f"Qt's {what} cannot load: {', '.join(sonames)} {verb} missing{advice}{tail}"


def xcb_problem() -> str | None:
    display = os.environ.get("DISPLAY", "")
    if not display:
        return f"no display to open the window on (DISPLAY is not set): use a desktop session, {HEADLESS}"
    missing = missing_libraries(plugin("xcb"), XCB_PACKAGES)
    if missing:
        return cannot_load("X11 platform", missing)
    if not x_server_answers():
        return f"cannot connect to the X display {display} (DISPLAY): is its X server running? ({HEADLESS})"
    return None


def x_server_answers() -> bool:
    """True when libxcb connects to the X server that DISPLAY names."""
    xcb = ctypes.CDLL("libxcb.so.1")
    xcb.xcb_connect.restype = ctypes.c_void_p
    xcb.xcb_connect.argtypes = [ctypes.c_char_p, ctypes.c_void_p]
    xcb.xcb_connection_has_error.argtypes = [ctypes.c_void_p]
    xcb.xcb_disconnect.argtypes = [ctypes.c_void_p]
    connection = xcb.xcb_connect(None, None)
    try:
        return xcb.xcb_connection_has_error(connection) == 0
    finally:
        xcb.xcb_disconnect(connection)


def wayland_problem() -> str | None:
    name = os.environ.get("WAYLAND_DISPLAY") or "wayland-0"  # libwayland's default
    socket = Path(os.environ.get("XDG_RUNTIME_DIR") or "/nonexistent", name)  # or an absolute path
    if not socket.exists():
        return f"no Wayland display {name} (WAYLAND_DISPLAY): use a desktop session, {HEADLESS}"
    missing = missing_libraries(plugin("wayland"), WAYLAND_PACKAGES)
    return cannot_load("Wayland platform", missing) if missing else None
