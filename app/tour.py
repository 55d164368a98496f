"""The guided tour: the panels in the order the first article builds the idea, then the second
article's retrieval view. Each stop opens a built-in lesson at one step and says what to look at;
PgDn goes on, PgUp back, Esc ends.

A tour file is JSON: {"format": "attention-lab tour", "version": 1, "title": ...,
"stops": [{"lesson": "qkv.json", "step": 0, "say": "..."}, ...]}; lessons are built-in file names.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from PySide6.QtCore import QObject, Signal

from app import lesson_files
from app.lesson_files import Lesson, LessonError

FORMAT = "attention-lab tour"
VERSION = 1
ARTICLE_TOUR = "the-article-in-20-minutes.tour.json"


@dataclass(frozen=True)
class Stop:
    lesson: Lesson
    say: str


def is_tour(path: str | Path) -> bool:
    return str(path).endswith(".tour.json")


def load(path: str | Path) -> tuple[str, list[Stop]]:
    """The tour's title and stops (each lesson read and set to the stop's step); LessonError if
    the file or one of its lessons cannot be read."""
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise LessonError(f"Could not read the tour {Path(path).name}: {exc}") from None
    if not isinstance(data, dict) or data.get("format") != FORMAT or data.get("version") != VERSION:
        raise LessonError(f"{Path(path).name} is not an Attention Lab tour of version {VERSION}.")
    builtin = lesson_files.builtin_lessons()
    stops = []
    for number, stop in enumerate(data.get("stops", []), 1):
        name = stop.get("lesson") if isinstance(stop, dict) else None
        if name not in builtin:
            raise LessonError(f"Stop {number} of the tour names {name!r}, which is not a built-in lesson.")
        lesson, _ = lesson_files.load(builtin[name])
        lesson.step = int(stop.get("step", lesson.step))
        stops.append(Stop(lesson, str(stop.get("say", ""))))
    if not stops:
        raise LessonError(f"The tour {Path(path).name} has no stops.")
    return str(data.get("title", "Tour")), stops


def article_tour() -> Path:
    return lesson_files.builtin_folder() / ARTICLE_TOUR


class Tour(QObject):
    """Walks the stops with ``open_stop(lesson)`` (the window's way to open a lesson), skipping
    stops for panels not among ``panels``.

    ``changed(text)`` carries the line to show (empty when the tour ends).
    """

    changed = Signal(str)

    def __init__(self, open_stop, panels: list[str], parent=None):
        super().__init__(parent)
        self.open_stop, self.panels = open_stop, panels
        self.title, self.stops, self.index = "", [], -1

    @property
    def active(self) -> bool:
        return self.index >= 0

    def start(self, path: str | Path | None = None) -> None:
        self.title, stops = load(path or article_tour())
        self.stops = [stop for stop in stops if stop.lesson.panel in self.panels]
        if not self.stops:
            raise LessonError("None of this tour's panels is in this window.")
        self.go(0)

    def go(self, index: int) -> None:
        self.index = max(0, min(index, len(self.stops) - 1))
        stop = self.stops[self.index]
        self.open_stop(stop.lesson)
        self.changed.emit(self.line())

    def line(self) -> str:
        stop = self.stops[self.index]
        return (
            f"{self.title} · stop {self.index + 1} of {len(self.stops)}: {stop.say}   (PgDn next, Esc ends)"
        )

    def next(self) -> None:
        if self.index + 1 < len(self.stops):
            self.go(self.index + 1)
        else:
            self.stop()

    def previous(self) -> None:
        self.go(self.index - 1)

    def stop(self) -> None:
        self.index = -1
        self.changed.emit("")
