"""The ``attention-lab`` command: the window by default, or a headless subcommand.

Qt, numpy and torch are imported only by the path that needs them, so ``--version`` is instant.
"""

from __future__ import annotations

import argparse
import logging
import sys
from contextlib import contextmanager

import core
from core.offline import switch_off_hub

# Every way out of the window, as --exit-after-paint names them (see leave_after_first_paint).
EXIT_PATHS = ("quit", "close", "shortcut", "menu", "sigint", "sigterm")


def build_parser(argv: list[str] | None = None) -> argparse.ArgumentParser:
    """The command line's parser; only the subcommands named in ``argv`` get their arguments (all
    of them when ``argv`` is None), so opening the window imports none of them."""
    from app.commands import COMMANDS, command
    from app.commands.arguments import Parser

    parser = Parser(
        prog="attention-lab",
        description="Attention Lab: learn how transformer attention works by touching it.",
    )
    parser.add_argument("--version", action="version", version=f"attention-lab {core.__version__}")
    parser.add_argument(
        "--panel", metavar="KEY", help="open this panel first, e.g. qkv (an unknown KEY lists them all)"
    )
    # For tests and the start-up benchmark: leave by this path as soon as the window has painted.
    parser.add_argument(
        "--exit-after-paint", nargs="?", const="quit", choices=EXIT_PATHS, help=argparse.SUPPRESS
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name, text in COMMANDS.items():
        parser_of_command = sub.add_parser(name, help=text, description=text)
        if argv is None or name in argv:
            command(name).add_arguments(parser_of_command)
    return parser


# Library loggers whose warnings are not for the person at the terminal; their errors still show.
# torch.utils.cpp_extension says "No CUDA runtime is found" when torch's CUDA build finds a CUDA
# toolkit but no GPU (FlexAttention's compiler imports it). Not the "torch" logger: importing
# torch sets its level back to WARNING.
QUIET_LOGGERS = ("torch.utils.cpp_extension",)


def quiet_libraries() -> None:
    """Keep the QUIET_LOGGERS' warnings off stderr (set before the libraries are imported)."""
    for name in QUIET_LOGGERS:
        logging.getLogger(name).setLevel(logging.ERROR)


def main(argv: list[str] | None = None) -> int:
    switch_off_hub()  # before anything can import transformers: no command but `models add` goes online
    quiet_libraries()
    argv = sys.argv[1:] if argv is None else argv
    args = build_parser(argv).parse_args(argv)
    if args.command is None:
        try:
            return open_window(args.panel, args.exit_after_paint)
        except KeyboardInterrupt:  # Ctrl+C while starting, before the window handles it
            return 130
    from app.commands import command, progress

    # Inside the session: an open progress line ("loading steps: 2/5") is ended before the error.
    with progress.session(args.command, to_stdout=args.command in progress.REPORTS_ON_STDOUT):
        try:
            with reading_at_most(getattr(args, "context", None)):
                return command(args.command).run(args)
        except (ValueError, OSError) as exc:
            print(f"attention-lab {args.command}: error: {exc}", file=sys.stderr)
            return 2


@contextmanager
def reading_at_most(tokens: int | None):
    """Inside: prompts are read to at most ``tokens`` (a command's --context; None: the model's own)."""
    if tokens is None:
        yield
        return
    from core.interp.prediction import set_context_limit

    set_context_limit(tokens)
    try:
        yield
    finally:
        set_context_limit(None)


def open_window(panel: str | None = None, exit_after_paint: str | None = None) -> int:
    refusal = no_window_here()
    if refusal is not None:
        return refuse(refusal)
    from PySide6.QtWidgets import QApplication

    skip_feature_scan()

    from app import log_file
    from app.panels import PANELS
    from app.qt_messages import keep_platform_noise_off_stderr, restore_qt_messages
    from app.shutdown import finish, quit_on_signals
    from app.window import MainWindow

    keys = [cls.key for cls in PANELS]
    if panel is not None and panel not in keys:
        return refuse(f"no panel called {panel!r}; choose from {', '.join(keys)}")
    log_file.start()
    app = QApplication.instance() or QApplication(sys.argv)
    app.setApplicationName("Attention Lab")
    app.setApplicationVersion(core.__version__)
    keep_platform_noise_off_stderr()
    window = MainWindow()
    if panel is not None:
        window.show_panel(panel)
    if exit_after_paint:
        leave_after_first_paint(window, exit_after_paint)
    sys.excepthook = window.report_exception
    window.show()
    with quit_on_signals(app.quit):  # closes the window (which saves its state), then quits
        code = app.exec()
    if window.isVisible():  # the loop was ended without closing it (QApplication.exit)
        window.close()
    sys.excepthook = sys.__excepthook__
    finish()  # see app.shutdown: without this ordered end, exit can crash
    restore_qt_messages()
    return code


def refuse(message: str) -> int:
    """Say why the window cannot open, as one whole line (ended, flushed), and return exit code 2."""
    sys.stderr.write(f"attention-lab: error: {' '.join(message.split())}\n")
    sys.stderr.flush()
    return 2


def no_window_here() -> str | None:
    """Why no window can open here, in one line naming the fix, or None (see app.qt_platform):
    asked before the QApplication exists, since Qt aborts the process when no platform starts."""
    if "PySide6.QtWidgets" in sys.modules:
        from PySide6.QtWidgets import QApplication

        if QApplication.instance() is not None:
            return None
    from app.qt_platform import why_no_window

    return why_no_window()


def skip_feature_scan() -> None:
    """Stop PySide6 from reading the source of every module imported after it.

    PySide6 searches each newly imported module's source for "PySide6" to support
    ``from __feature__ import ...`` (snake_case names), which Attention Lab does not use: about
    65 ms of start-up and 340 ms of torch and transformers' import, interpreter lock held. A module
    is marked as using PySide6 from its globals instead (a class or module of PySide6 among them).
    """
    import types

    try:
        from PySide6.support import feature
    except ImportError:  # another PySide6 layout: keep its own behaviour
        return
    known = getattr(feature, "pyside_feature_dict", None)
    if not isinstance(known, dict) or not hasattr(feature, "feature_imported"):
        return

    def imported(module: types.ModuleType) -> None:
        name = getattr(module, "__name__", None)
        if isinstance(name, str) and name not in known:
            # type() and vars(), not isinstance() and attributes: some libraries warn when a
            # deprecated global is touched.
            origins = (
                vars(value).get("__name__" if issubclass(type(value), types.ModuleType) else "__module__")
                for value in vars(module).values()
                if issubclass(type(value), (type, types.ModuleType))
            )
            uses = any(str(origin).startswith("PySide6") for origin in origins)
            known[name] = 0 if uses else -1  # PySide6's own marks: 0 uses it, -1 does not

    feature.feature_imported = imported


def leave_after_first_paint(window, how: str) -> None:
    """For tests and the start-up benchmark: once the window has painted, leave the app by ``how``.

    The moment of the first paint is printed (seconds since the epoch). quit: QApplication.quit();
    close: close the window; shortcut: press the Quit shortcut (Ctrl+Q);
    menu: File → Quit; sigint, sigterm: send this process the signal (as Ctrl+C or logout do).
    """
    import os
    import signal
    import time

    from PySide6.QtCore import QEvent, QObject, QTimer
    from PySide6.QtWidgets import QApplication

    app = QApplication.instance()

    def leave() -> None:
        if how == "quit":
            app.quit()
        elif how == "close":
            window.close()
        elif how == "shortcut":
            from PySide6.QtTest import QTest

            window.activateWindow()
            keys = window.quit_action.shortcut()[0]
            QTest.keyClick(window, keys.key(), keys.keyboardModifiers())
        elif how == "menu":
            window.quit_action.trigger()
        else:
            os.kill(os.getpid(), signal.SIGINT if how == "sigint" else signal.SIGTERM)

    class AfterPaint(QObject):
        def eventFilter(self, _obj, event):
            if event.type() == QEvent.Type.Paint:
                app.removeEventFilter(self)
                print(f"first paint at {time.time():.6f}", flush=True)  # the start-up benchmark's clock
                # After this paint has finished: closing the window inside it would make Qt go on
                # painting a window whose native surface is gone.
                QTimer.singleShot(0, leave)
            return False

    app.installEventFilter(AfterPaint(window))  # the window owns the filter
