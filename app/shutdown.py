"""Ending a Qt process cleanly: quit on Ctrl+C and SIGTERM, and delete widgets while Python runs.

Why an explicit teardown: a window's Python object is never freed by reference counting alone.
Its actions and signals are connected to lambdas and bound methods that hold the window, a cycle
that passes through C++ where Python's collector cannot see it. PySide then deletes such widgets
from its own exit hook, in no particular order: a plot's axis label can be deleted before the
axis, whose Python ``resizeEvent`` (pyqtgraph) still reads the label while the scene is cleared,
and the error raised there crashes the process (segmentation fault) instead of being printed.
``delete_widgets`` deletes every window while the interpreter is whole, each widget before its
children as Qt does, so no plot item outlives its parent. Importing this module registers
``finish`` (tasks, then widgets) to run at exit ahead of PySide's hook: exit hooks run newest
first, and Qt is imported above.
"""

from __future__ import annotations

import atexit
import gc
import signal
import socket
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress

import shiboken6
from PySide6.QtCore import QSocketNotifier
from PySide6.QtWidgets import QApplication

from app import worker

QUIT_SIGNALS = (signal.SIGINT, signal.SIGTERM)


def finish() -> None:
    """Wait for background tasks, then delete the widgets left: the end of every Qt process here.

    A task still running when Python tears down would emit its signals from an object PySide has
    already deleted; cancelled tasks end at their next progress call, so the wait is short.
    """
    if QApplication.instance() is None:
        return
    worker.cancel_all(timeout_s=None)
    delete_widgets()


def delete_widgets() -> None:
    """Delete every top-level widget still alive, then free the Python cycles that held them."""
    app = QApplication.instance()
    if app is None:
        return
    for widget in app.topLevelWidgets():
        # Only widgets made from Python: shiboken hears of their deletion, so isValid can be
        # trusted after a window deleted earlier in this loop took its dialogs and menus along.
        if shiboken6.createdByPython(widget) and shiboken6.isValid(widget) and widget.parentWidget() is None:
            shiboken6.delete(widget)
    gc.collect()


atexit.register(finish)


def drain(reader: socket.socket) -> None:
    """Read the wake-up bytes waiting on ``reader``, if any."""
    with suppress(BlockingIOError):
        while reader.recv(64):
            pass


@contextmanager
def quit_on_signals(quit: Callable[[], None]) -> Iterator[None]:
    """Call ``quit`` on the UI thread when SIGINT (Ctrl+C) or SIGTERM arrives, inside the block.

    Python runs a signal handler only when the interpreter next gets control, and Qt's event loop
    can wait in C++ indefinitely. So the signal's C-level handler writes to a socket
    (``signal.set_wakeup_fd``) whose notifier wakes the event loop; the Python handler runs there.
    A second Ctrl+C while quitting ends the process at once, as terminals lead people to expect.
    """
    reader, writer = socket.socketpair()
    reader.setblocking(False)
    writer.setblocking(False)
    notifier = QSocketNotifier(reader.fileno(), QSocketNotifier.Type.Read)
    notifier.activated.connect(lambda: drain(reader))

    def on_signal(number, _frame) -> None:
        signal.signal(number, signal.SIG_DFL)
        quit()

    previous_fd = signal.set_wakeup_fd(writer.fileno(), warn_on_full_buffer=False)
    previous = {number: signal.signal(number, on_signal) for number in QUIT_SIGNALS}
    try:
        yield
    finally:
        for number, handler in previous.items():
            signal.signal(number, handler)
        signal.set_wakeup_fd(previous_fd)
        notifier.setEnabled(False)
        reader.close()
        writer.close()
