"""What the two commands that build panels share (``smoke``, ``export-script``): panel keys
checked against PANELS, an application on the offscreen platform with empty settings, and the
progress of the panels' background tasks for the heartbeat to say."""

from __future__ import annotations

import os
import tempfile
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from functools import partial


def panel_keys() -> list[str]:
    """Every panel's key, in teaching order, from PANELS's entries (no panel is imported)."""
    from app.panels import PANELS

    return [entry.key for entry in PANELS]


def check_panels(keys: Iterable[str]) -> None:
    """ValueError naming the keys PANELS does not have, and the ones it has."""
    known = panel_keys()
    unknown = sorted(set(keys) - set(known))
    if unknown:
        raise ValueError(f"unknown panel {', '.join(unknown)}; choose from {', '.join(known)}")


@contextmanager
def offscreen_app() -> Iterator:
    """The QApplication (offscreen unless a platform is set), its settings in a temporary folder
    that goes afterwards: a run never reads or changes the user's."""
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    from PySide6.QtWidgets import QApplication

    from app import settings

    with tempfile.TemporaryDirectory() as folder:
        settings.use_folder(folder)
        yield QApplication.instance() or QApplication([])


class TaskProgress:
    """The progress the panels' background tasks report, for the heartbeat to say while a command
    waits for them: every task started while this is on (a context manager) is followed."""

    def __init__(self, worker):
        self.watch = worker.watching(self.follow)
        self.reached: dict[int, tuple[str, int, int]] = {}  # id(task) -> (its function, done, total)
        self.running: dict[int, str] = {}

    def follow(self, task) -> None:
        key, name = id(task), task_name(task.fn, task.args)
        self.running[key] = name
        task.progressed.connect(lambda done, total: self.reached.__setitem__(key, (name, done, total)))
        task.finished.connect(lambda: self.forget(key))

    def forget(self, key: int) -> None:
        self.running.pop(key, None)
        self.reached.pop(key, None)

    def __enter__(self) -> TaskProgress:
        self.watch.__enter__()
        return self

    def __exit__(self, *exc) -> None:
        self.watch.__exit__(*exc)

    def describe(self) -> str:
        """'sweep 40/270, load model' — the tasks running now, with how far each has got."""
        parts = []
        for key, name in list(self.running.items()):
            reached = self.reached.get(key)
            parts.append(f"{name} {reached[1]}/{reached[2]}" if reached else name)
        return ", ".join(dict.fromkeys(parts))  # two panels loading one model: said once


def task_name(fn, args: tuple) -> str:
    """A background task as the heartbeat names it: its function ("compute pair"), or for the
    shared models' ``get`` the model it loads ("loading smollm2")."""
    while isinstance(fn, partial):
        fn = fn.func
    qualname = getattr(fn, "__qualname__", "") or ""
    if qualname.endswith(".get") and args and isinstance(args[0], str):
        return f"loading {args[0]}"
    name = getattr(fn, "__name__", "") or ""
    return "a task" if not name.isidentifier() else name.strip("_").replace("_", " ")
