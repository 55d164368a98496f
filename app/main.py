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
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for command in COMMANDS:
        command.add_arguments(sub.add_parser(command.NAME, help=command.HELP, description=command.HELP))
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.command is None:
        return open_window(args.panel)
    from app.commands import COMMANDS

    command = next(c for c in COMMANDS if args.command == c.NAME)
    try:
        return command.run(args)
    except (ValueError, OSError) as exc:
        print(f"attention-lab {command.NAME}: error: {exc}", file=sys.stderr)
        return 2


def open_window(panel: str | None = None) -> int:
    from PySide6.QtWidgets import QApplication

    from app.window import MainWindow

    app = QApplication.instance() or QApplication(sys.argv)
    app.setApplicationName("Attention Lab")
    app.setApplicationVersion(core.__version__)
    window = MainWindow()
    if panel:
        window.show_panel(panel)
    window.show()
    return app.exec()
