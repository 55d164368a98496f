"""The ``attention-lab`` command: the window by default, or a headless subcommand.

Qt, numpy and torch are imported only by the path that needs them, so ``--version`` is instant.
"""

from __future__ import annotations

import argparse
import sys

import core


def build_parser() -> argparse.ArgumentParser:
    from app.commands import COMMANDS

    parser = argparse.ArgumentParser(
        prog="attention-lab",
        description="Attention Lab: learn how transformer attention works by touching it.",
    )
    parser.add_argument("--version", action="version", version=f"attention-lab {core.__version__}")
    parser.add_argument("--panel", metavar="KEY", help="open this panel first (e.g. qkv)")
    # For the start-up benchmark: quit as soon as the window has painted once.
    parser.add_argument("--exit-after-paint", action="store_true", help=argparse.SUPPRESS)
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for command in COMMANDS:
        command.add_arguments(sub.add_parser(command.NAME, help=command.HELP, description=command.HELP))
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.command is None:
        return open_window(args.panel, args.exit_after_paint)
    from app.commands import COMMANDS

    command = next(c for c in COMMANDS if args.command == c.NAME)
    try:
        return command.run(args)
    except (ValueError, OSError) as exc:
        print(f"attention-lab {command.NAME}: error: {exc}", file=sys.stderr)
        return 2


def open_window(panel: str | None = None, exit_after_paint: bool = False) -> int:
    from PySide6.QtCore import QEvent, QObject
    from PySide6.QtWidgets import QApplication

    from app.window import MainWindow

    app = QApplication.instance() or QApplication(sys.argv)
    app.setApplicationName("Attention Lab")
    app.setApplicationVersion(core.__version__)
    window = MainWindow()
    if panel:
        try:
            window.show_panel(panel)
        except ValueError as exc:
            print(f"attention-lab: error: {exc}", file=sys.stderr)
            return 2
    sys.excepthook = window.report_exception

    class ExitAfterPaint(QObject):
        def eventFilter(self, _obj, event):
            if event.type() == QEvent.Type.Paint:
                app.quit()
            return False

    if exit_after_paint:  # the first paint of any widget of the window
        app.installEventFilter(quitter := ExitAfterPaint(window))
        window.exit_filter = quitter
    window.show()
    return app.exec()
