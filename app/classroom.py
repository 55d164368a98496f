"""What a lecturer does around the panels, for the main window's menus: save and open lessons
(recent and built-in ones), hide controls for a class, export the whole panel as a picture or
the step on screen as a Python script.

Errors are shown in a message box and change nothing; warnings go to the status bar.
"""

from __future__ import annotations

import logging
from pathlib import Path

from PySide6.QtCore import QObject, Qt, QTimer
from PySide6.QtWidgets import (
    QDialog,
    QDialogButtonBox,
    QFileDialog,
    QInputDialog,
    QListWidget,
    QListWidgetItem,
    QMessageBox,
    QVBoxLayout,
)

from app import lesson_files, tour, worker
from app.lesson_files import Lesson, LessonError
from app.settings import settings
from app.widgets.export import ask_save_path, render_png, report

log = logging.getLogger(__name__)

RECENT_KEY, MAX_RECENT = "lessons/recent", 8
LESSON_FILTER = "Attention Lab lessons (*.json)"


class Classroom(QObject):
    def __init__(self, window):
        super().__init__(window)
        self.window = window
        self.tour = tour.Tour(self.apply_lesson, window.keys(), self)
        self.pending = None  # (panel, lesson, report) to finish once the panel's background work is done
        self.settle_timer = QTimer(self)
        self.settle_timer.setInterval(100)
        self.settle_timer.timeout.connect(self._settle)

    # --- lessons -----------------------------------------------------------------------------
    def apply_lesson(self, lesson: Lesson, report=None) -> None:
        """Open ``lesson`` in its panel; LessonError (and nothing changed) if it does not fit.

        ``report(warnings)`` is called once the panel is in the lesson's state: at once, or, when
        the panel started background work (loading a model, a run), after that work, with the
        lesson applied again so that choices that depend on its result (e.g. tokens) are set too.
        """
        known = self.window.keys()
        if lesson.panel not in known:
            raise LessonError(
                f"This lesson is for a panel called {lesson.panel!r}, which this version does not have."
            )
        panel = self.window.panel(lesson.panel)
        lesson_files.plan(panel, lesson)  # raises before anything changes
        self.window.show_panel(lesson.panel)
        warnings = lesson_files.apply(panel, lesson)
        if worker.busy():
            self.pending = (panel, lesson, report)
            self.settle_timer.start()
        elif report is not None:
            report(warnings)

    def _settle(self) -> None:
        if worker.busy() or self.pending is None:
            return
        self.settle_timer.stop()
        (panel, lesson, report), self.pending = self.pending, None
        warnings = lesson_files.apply(panel, lesson)
        if report is not None:
            report(warnings)

    def open_path(self, path: str | Path, report=None) -> None:
        """Open a lesson file (or start a tour file); LessonError if it cannot be opened.
        ``report(warnings)`` as for apply_lesson."""
        if tour.is_tour(path):
            self.tour.start(path)
            if report is not None:
                report([])
            return
        lesson, warnings = lesson_files.load(path)
        self.apply_lesson(lesson, None if report is None else lambda more: report(warnings + more))
        self.remember(path)

    def open_lesson(self, path: str | Path) -> None:
        """Open ``path``, telling the user about problems."""
        name = Path(path).name
        try:
            self.open_path(path, lambda warnings: self._opened(name, warnings))
        except LessonError as exc:
            QMessageBox.warning(self.window, "Cannot open the lesson", str(exc))

    def _opened(self, name: str, warnings: list[str]) -> None:
        for warning in warnings:
            log.warning("Lesson %s: %s", name, warning)
        text = f"Opened {name}" + (f" with warnings: {'; '.join(warnings)}" if warnings else "")
        self.window.statusBar().showMessage(text, 15000)

    def open_dialog(self) -> None:
        folder = str(settings().value("lessons/folder", Path.home()))
        path, _ = QFileDialog.getOpenFileName(self.window, "Open lesson", folder, LESSON_FILTER)
        if path:
            settings().setValue("lessons/folder", str(Path(path).parent))
            self.open_lesson(path)

    def save_path(self, path: str | Path, title: str = "") -> None:
        lesson_files.save(path, lesson_files.capture(self.window.current(), title))
        self.remember(path)

    def save_dialog(self) -> None:
        panel = self.window.current()
        folder = Path(str(settings().value("lessons/folder", Path.home())))
        path, _ = QFileDialog.getSaveFileName(
            self.window, "Save lesson", str(folder / f"{panel.key}.json"), LESSON_FILTER
        )
        if not path:
            return
        settings().setValue("lessons/folder", str(Path(path).parent))
        try:
            self.save_path(path, panel.title)
        except OSError as exc:
            QMessageBox.warning(self.window, "Cannot save the lesson", f"Could not write {path}: {exc}")
            return
        self.window.statusBar().showMessage(f"Saved {path}", 8000)

    # --- recent and built-in lessons ---------------------------------------------------------------
    def recent(self) -> list[str]:
        value = settings().value(RECENT_KEY, [])
        return [str(p) for p in ([value] if isinstance(value, str) else value or [])]

    def remember(self, path: str | Path) -> None:
        path = str(Path(path).resolve())
        if Path(path).parent == lesson_files.builtin_folder():
            return
        settings().setValue(RECENT_KEY, [path, *(p for p in self.recent() if p != path)][:MAX_RECENT])

    def fill_recent_menu(self, menu) -> None:
        menu.clear()
        for path in self.recent():
            menu.addAction(Path(path).name, lambda p=path: self.open_lesson(p)).setToolTip(path)
        if menu.isEmpty():
            menu.addAction("(none yet)").setEnabled(False)

    def fill_builtin_menu(self, menu) -> None:
        menu.clear()
        menu.addAction("The article in 20 minutes (tour)", lambda: self.open_lesson(tour.article_tour()))
        menu.addSeparator()
        for name, path in lesson_files.builtin_lessons().items():
            title = lesson_files.load(path)[0].title or name
            menu.addAction(title, lambda p=path: self.open_lesson(p))

    # --- hiding controls -------------------------------------------------------------------------
    def hide_controls_dialog(self) -> None:
        """Tick the controls a class should not see; saved with the lesson."""
        panel = self.window.current()
        found = lesson_files.controls(panel)
        dialog = QDialog(self.window)
        dialog.setWindowTitle(f"Controls shown in {panel.title}")
        items = QListWidget()
        for path, widget in found.items():
            item = QListWidgetItem(lesson_files.control_label(panel, path, widget))
            item.setData(Qt.ItemDataRole.UserRole, path)
            item.setToolTip(path)
            shown = not widget.property(lesson_files.HIDDEN_PROPERTY)
            item.setCheckState(Qt.CheckState.Checked if shown else Qt.CheckState.Unchecked)
            items.addItem(item)
        buttons = QDialogButtonBox(
            QDialogButtonBox.StandardButton.Ok | QDialogButtonBox.StandardButton.Cancel
        )
        buttons.accepted.connect(dialog.accept)
        buttons.rejected.connect(dialog.reject)
        layout = QVBoxLayout(dialog)
        layout.addWidget(items)
        layout.addWidget(buttons)
        if dialog.exec() == QDialog.DialogCode.Accepted:
            hidden = [
                items.item(k).data(Qt.ItemDataRole.UserRole)
                for k in range(items.count())
                if items.item(k).checkState() != Qt.CheckState.Checked
            ]
            lesson_files.set_hidden(panel, hidden)

    # --- the whole panel as a picture ------------------------------------------------------------
    def export_script_dialog(self) -> None:
        """Save the step on screen as a Python script over core (``Panel.script``)."""
        panel = self.window.current()
        try:
            text = panel.script(panel.step)
        except ValueError as exc:  # nothing computed yet, e.g. the model still loading
            panel.show_message(str(exc))
            return
        name = f"{panel.key}-step{panel.step + 1}.py"
        path = ask_save_path(self.window, "Export experiment as Python", name, "Python script (*.py)")
        if path:
            report(self.window, lambda: Path(path).write_text(text, encoding="utf-8"), path)

    def export_panel_dialog(self) -> None:
        panel = self.window.current()
        scale, ok = QInputDialog.getDouble(
            self.window, "Export panel as PNG", "Scale (2 = twice the size on screen):", 2.0, 0.5, 6.0, 1
        )
        if not ok:
            return
        path = ask_save_path(self.window, "Export panel as PNG", f"{panel.key}.png", "PNG image (*.png)")
        if path:
            report(self.window, lambda: render_png(panel, path, scale), path)
