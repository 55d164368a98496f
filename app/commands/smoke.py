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
    from app.commands.offscreen import panel_keys

    keys = ", ".join(panel_keys())
    parser.add_argument(
        "--panel",
        action="append",
        metavar="KEY",
        help=f"only this panel (repeatable): {keys}; default: every panel",
    )


def run(args) -> int:
    from app.commands import progress
    from app.commands.offscreen import check_panels
    from app.panels import PANELS

    check_panels(args.panel or ())
    out = Path(args.screenshots).resolve() if args.screenshots else None
    if out:
        out.mkdir(parents=True, exist_ok=True)
    chosen = [cls.key for cls in PANELS if not args.panel or cls.key in args.panel]
    started = time.monotonic()
    where = f"one PNG each into {out}" if out else "no screenshots (--screenshots DIR saves them)"
    progress.say(f"smoke: {len(chosen)} of {len(PANELS)} panels, {where}")
    progress.stage("starting the offscreen application")
    problems, passed = exercise_panels(chosen, out)
    for problem in problems:
        print(f"problem: {problem}", file=sys.stderr)
    took = progress.elapsed(time.monotonic() - started)
    shots = f"; screenshots in {out}" if out else ""
    if problems:
        found = f"{len(problems)} problem{'s' * (len(problems) > 1)}, listed on stderr"
        progress.say(f"smoke: {passed} of {len(chosen)} panels passed, {found}, in {took}{shots}")
    else:
        every = f"all {len(chosen)} panels" if len(chosen) > 1 else "the panel"
        progress.say(f"smoke: {every} passed in {took}{shots}")
    return 1 if problems else 0


def exercise_panels(chosen: list[str], out: Path | None) -> tuple[list[str], int]:
    """Page through the panels ``chosen``, then exercise each (a PNG each into ``out``): the
    problems found, and how many panels passed."""
    from PySide6.QtCore import QtMsgType, qInstallMessageHandler

    from app import worker
    from app.commands import progress
    from app.commands.offscreen import TaskProgress, offscreen_app
    from app.panels import PANELS
    from app.qt_messages import PLATFORM_NOISE

    problems: list[str] = []
    passed = 0

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
    try:
        with offscreen_app() as app, TaskProgress(worker) as tasks:
            from app.window import MainWindow

            window = MainWindow()
            window.resize(1500, 900)
            window.show()
            page_through(window, chosen, app)
            if worker.busy():
                progress.working("waiting for the work the paging started", tasks.describe)
            if not worker.wait_idle(300):
                problems.append(f"background work still running after paging: {', '.join(worker.running())}")
            app.processEvents()
            if window.statusBar().currentMessage():
                problems.append(f"status bar after paging: {window.statusBar().currentMessage()}")
            numbered = [(number, cls) for number, cls in enumerate(PANELS, 1) if cls.key in chosen]
            for count, (number, cls) in enumerate(numbered, 1):
                progress.working(f"exercising {cls.key} ({count} of {len(numbered)})", tasks.describe)
                before, start = len(problems), time.perf_counter()
                try:
                    panel = window.show_panel(cls.key)
                    panel.exercise()
                    worker.settle()
                    app.processEvents()
                    if out:
                        window.grab().save(str(out / f"{number:02d}-{cls.key}.png"))
                except Exception as exc:  # report every panel, then fail
                    problems.append(f"{cls.key}: {type(exc).__name__}: {exc}")
                if window.statusBar().currentMessage():
                    problems.append(f"{cls.key}: status bar: {window.statusBar().currentMessage()}")
                status = "ok" if len(problems) == before else "FAILED"
                passed += status == "ok"
                print(f"{status:6} {cls.key:12} {len(cls.steps)} steps  {time.perf_counter() - start:.2f} s")
            progress.working("closing the window and stopping its background work")
            window.close()
            worker.cancel_all()
    finally:
        qInstallMessageHandler(None)
        sys.excepthook, warnings.showwarning = hooks
    return problems, passed


def page_through(window, keys: list[str], app) -> None:
    """Show every step of the panels ``keys`` in turn, as a person pressing PgDn does, without
    waiting for their background work (model loads, searches) to finish."""
    from app.commands import progress

    progress.stage(f"paging through every step of {len(keys)} panel{'s' * (len(keys) > 1)}")
    for count, key in enumerate(keys, 1):
        progress.update(f"paging: {key} ({count} of {len(keys)})", last=count == len(keys))
        panel = window.show_panel(key)
        panel.set_step(0)
        app.processEvents()
        for _ in panel.steps[1:]:
            window.next_step()
            app.processEvents()
