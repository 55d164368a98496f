"""``attention-lab smoke``: page through every step as PgDn does, then open every panel offscreen,
exercise it, and save one PNG per panel.

The paging comes first, without waiting, so it runs while the first models are still loading.
Exits 1 if anything raised, warned, logged a Qt warning or left a message in the status bar.
"""

from __future__ import annotations

import sys
import time
import warnings
from pathlib import Path


def add_arguments(parser) -> None:
    parser.add_argument("--screenshots", metavar="DIR", help="save one PNG per panel into DIR")
    parser.add_argument(
        "--panel", action="append", metavar="KEY", help="only this panel (repeatable); default: every panel"
    )


def run(args) -> int:
    from PySide6.QtCore import QtMsgType, qInstallMessageHandler

    from app import worker
    from app.commands.offscreen import check_panels, offscreen_app
    from app.panels import PANELS
    from app.qt_messages import PLATFORM_NOISE

    check_panels(args.panel or ())
    out = Path(args.screenshots) if args.screenshots else None
    if out:
        out.mkdir(parents=True, exist_ok=True)

    problems: list[str] = []

    def on_qt_message(kind, _context, message):
        if kind not in (QtMsgType.QtDebugMsg, QtMsgType.QtInfoMsg) and message not in PLATFORM_NOISE:
            problems.append(f"Qt: {message}")

    def on_exception(kind, value, tb):
        problems.append(f"{kind.__name__}: {value}")
        sys.__excepthook__(kind, value, tb)

    def on_warning(message, category, filename, lineno, file=None, line=None):
        problems.append(f"{category.__name__}: {message} ({filename}:{lineno})")

    qInstallMessageHandler(on_qt_message)
    hooks = sys.excepthook, warnings.showwarning
    sys.excepthook, warnings.showwarning = on_exception, on_warning
    with offscreen_app() as app:
        from app.window import MainWindow

        window = MainWindow()
        window.resize(1500, 900)
        window.show()
        chosen = [cls.key for cls in PANELS if not args.panel or cls.key in args.panel]
        page_through(window, chosen, app)
        worker.wait_idle()
        app.processEvents()
        if window.statusBar().currentMessage():
            problems.append(f"status bar after paging: {window.statusBar().currentMessage()}")
        for number, cls in enumerate(PANELS, 1):
            if args.panel and cls.key not in args.panel:
                continue
            before, start = len(problems), time.perf_counter()
            try:
                panel = window.show_panel(cls.key)
                panel.exercise()
                worker.wait_idle()
                app.processEvents()
                if out:
                    window.grab().save(str(out / f"{number:02d}-{cls.key}.png"))
            except Exception as exc:  # report every panel, then fail
                problems.append(f"{cls.key}: {type(exc).__name__}: {exc}")
            if window.statusBar().currentMessage():
                problems.append(f"{cls.key}: status bar: {window.statusBar().currentMessage()}")
            status = "ok" if len(problems) == before else "FAILED"
            print(f"{status:6} {cls.key:12} {len(cls.steps)} steps  {time.perf_counter() - start:.2f} s")
        window.close()
        worker.cancel_all()
    qInstallMessageHandler(None)
    sys.excepthook, warnings.showwarning = hooks
    for problem in problems:
        print(f"problem: {problem}", file=sys.stderr)
    return 1 if problems else 0


def page_through(window, keys: list[str], app) -> None:
    """Show every step of the panels ``keys`` in turn, as a person pressing PgDn does, without
    waiting for their background work (model loads, searches) to finish."""
    for key in keys:
        panel = window.show_panel(key)
        panel.set_step(0)
        app.processEvents()
        for _ in panel.steps[1:]:
            window.next_step()
            app.processEvents()
