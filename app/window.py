"""The main window: navigation built from PANELS, the live panel, and the lesson pane.

Lecture mode is a set of shortcuts: F5 presenting (navigation, lesson pane, control columns, menu
and status bars hidden, so the step's view gets the window), F11 full screen, Ctrl+= / Ctrl+- text
size, PgDn / PgUp through the current panel's steps and on to the next panel. Geometry, the last
panel, text size, theme, the lesson pane and presenting are remembered between sessions.

The side columns follow the text size: the navigation list is exactly as wide as its longest
title, the lesson pane about LESSON_CHARS characters (never more than a third of the window).
"""

from __future__ import annotations

import logging
from importlib.resources import files

from PySide6.QtCore import QEvent, Qt, QTimer
from PySide6.QtGui import QAction, QActionGroup, QFont, QIcon, QKeySequence
from PySide6.QtWidgets import (
    QApplication,
    QComboBox,
    QInputDialog,
    QLabel,
    QListWidget,
    QMainWindow,
    QMessageBox,
    QSplitter,
)

import app.shutdown  # noqa: F401  (registers the exit hook that deletes windows in order)
from app import log_file, worker
from app.about import about_html
from app.classroom import Classroom
from app.lesson_pane import LessonPane
from app.panels import PANELS, PanelEntry
from app.panels.base import HEAD_PANEL, Panel
from app.reveal import Reveal
from app.settings import settings
from app.theme import THEMES, apply_theme, style_plots
from app.tour import article_tour as tour_file
from app.widgets.export import attach_exports
from app.widgets.page_stack import PageStack, PanelScroll
from app.widgets.sizing import ComboSizes
from resources import lesson_text

log = logging.getLogger(__name__)

MIN_SCALE, MAX_SCALE, SCALE_STEP = 0.6, 3.0, 1.15
FULL_SCREEN_WAIT_MS = 500  # how long a window manager gets to make the window full screen
LESSON_CHARS, MIN_LESSON_CHARS = 40, 18  # the lesson pane's width, and its least, in average characters
NAV_SHARE = 1 / 6  # navigation titles wider than this share of the window wrap at their longest word


class MainWindow(QMainWindow):
    def __init__(self, panels: list[PanelEntry] = PANELS):
        super().__init__()
        self.setWindowTitle("Attention Lab")
        self.setWindowIcon(QIcon(str(files("resources").joinpath("icons", "attention-lab.svg"))))
        self.classes = list(panels)  # PANELS entries; a panel is built (and imported) on first use
        self.panels: dict[str, Panel] = {}
        self.combo_sizes = ComboSizes(self)
        self.unstyled: set[str] = set()  # built panels whose plots wait for the theme and text size
        app = QApplication.instance()
        if app.property("base_point_size") is None:  # the size before any scaling, once per process
            app.setProperty("base_point_size", app.font().pointSizeF())
        self.base_point_size = float(app.property("base_point_size"))
        self.font_scale = 1.0
        self.theme = "system"
        self.context = 0  # the most tokens of a prompt read; 0: as many as the model's context holds

        self.nav = QListWidget()
        self.nav.addItems([cls.title for cls in self.classes])
        self.nav.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.nav.setWordWrap(True)
        self.stack = PageStack()
        self.panel_area = PanelScroll(self.stack)
        self.lesson = LessonPane()
        self.splitter = QSplitter(Qt.Orientation.Horizontal)
        # the panel gets the room the side columns leave
        for widget, stretch in ((self.nav, 0), (self.panel_area, 1), (self.lesson, 0)):
            self.splitter.addWidget(widget)
            self.splitter.setStretchFactor(self.splitter.count() - 1, stretch)
        self.splitter.setChildrenCollapsible(False)
        self.setCentralWidget(self.splitter)
        self.presenting = False
        self.fitted = False  # the side columns are sized once the window is first shown
        self.window_geometry, self.filled_by_hand = self.geometry(), False
        self.step_label = QLabel()
        self.statusBar().addPermanentWidget(self.step_label)
        self.classroom = Classroom(self)
        self.reveal = Reveal(self)
        self.tour_label = QLabel()
        self.tour_label.hide()
        self.statusBar().addWidget(self.tour_label, 1)
        self.classroom.tour.changed.connect(self._on_tour)

        self._build_menus()
        self.nav.currentRowChanged.connect(self._on_row)
        self._restore()

    # --- panels -----------------------------------------------------------------------------
    def keys(self) -> list[str]:
        return [cls.key for cls in self.classes]

    def current(self) -> Panel:
        return self.stack.currentWidget()

    def panel(self, key: str) -> Panel:
        """The panel with ``key``, built on first use."""
        if key not in self.panels:
            if key not in self.keys():
                raise ValueError(f"No panel called {key!r}; the panels are {', '.join(self.keys())}.")
            panel = self.classes[self.keys().index(key)]()
            panel.stepChanged.connect(self._on_step)
            panel.openPanel.connect(self.show_panel)
            panel.openHead.connect(lambda cell: self.show_panel(HEAD_PANEL).open_head(cell))
            self.stack.addWidget(panel)
            for box in panel.findChildren(QComboBox):
                box.installEventFilter(self.combo_sizes)
            style_plots(panel)
            panel.set_presenting(self.presenting)
            self.panels[key] = panel
        return self.panels[key]

    def show_panel(self, key: str) -> Panel:
        row = self.keys().index(key) if key in self.keys() else -1
        if row < 0:
            raise ValueError(f"No panel called {key!r}; the panels are {', '.join(self.keys())}.")
        self.nav.setCurrentRow(row)
        return self.panel(key)

    def _on_row(self, row: int) -> None:
        if row < 0:
            return
        entry = self.classes[row]
        panel = self.panel(entry.key)
        if entry.key in self.unstyled:  # restyled as it comes into view, before it paints
            self.unstyled.discard(entry.key)
            style_plots(panel)
        self.stack.setCurrentWidget(panel)
        attach_exports(panel, panel.export(), prefix=f"{entry.key}-")
        try:
            self.lesson.setMarkdown(lesson_text(entry.lesson_file()))
        except FileNotFoundError:
            self.lesson.setMarkdown(f"*The lesson file {entry.lesson_file()} is missing from this install.*")
        self._on_step(panel.step)

    def _on_step(self, step: int) -> None:
        panel = self.current()
        if panel is None:
            return
        self._refit()
        QTimer.singleShot(0, self._refit)  # again once the step's views built on first show measured
        self.step_label.setText(
            f"{panel.title} · step {step + 1} of {len(panel.steps)}: "
            f"{panel.steps[step]}   (PgDn next, PgUp back)"
        )
        self.lesson.show_section(step)
        self.reveal.cover(panel)

    def _refit(self) -> None:
        """Refit the side columns if the panel lacks room or the lesson pane is squeezed: a wider
        step makes the lesson pane give room, a narrower one gives it back."""
        char = self.lesson.fontMetrics().averageCharWidth()
        squeezed = self.lesson.width() < min(LESSON_CHARS * char, self.width() // 3)
        if self.fitted and (squeezed or self.panel_area.width() < self.panel_area.minimumSizeHint().width()):
            self.fit_side_columns()

    def next_step(self) -> None:
        if self.classroom.tour.active:
            self.classroom.tour.next()
            return
        panel, row = self.current(), self.nav.currentRow()
        if panel.step + 1 < len(panel.steps):
            panel.set_step(panel.step + 1)
        elif row + 1 < len(self.classes):
            self.show_panel(self.classes[row + 1].key).set_step(0)

    def previous_step(self) -> None:
        if self.classroom.tour.active:
            self.classroom.tour.previous()
            return
        panel, row = self.current(), self.nav.currentRow()
        if panel.step > 0:
            panel.set_step(panel.step - 1)
        elif row > 0:
            previous = self.show_panel(self.classes[row - 1].key)
            previous.set_step(len(previous.steps) - 1)

    def move_panel(self, delta: int) -> None:
        row = min(max(self.nav.currentRow() + delta, 0), len(self.classes) - 1)
        self.nav.setCurrentRow(row)

    # --- view -------------------------------------------------------------------------------
    def set_font_scale(self, scale: float) -> None:
        """Scale every font in the window, plot labels included (lecture mode)."""
        self.font_scale = min(max(scale, MIN_SCALE), MAX_SCALE)
        app = QApplication.instance()
        font = QFont(app.font())
        font.setPointSizeF(self.base_point_size * self.font_scale)
        app.setFont(font)
        self.restyle_plots()
        if self.current() is not None:  # the lesson text moved: keep the current section in view
            self.lesson.show_section(self.current().step)

    def fit_side_columns(self) -> None:
        """Size the navigation list to its longest title and the lesson pane to about LESSON_CHARS
        characters of the current text size, less if the panel needs the room; the panel gets the
        rest."""
        nav, metrics = self.nav, self.nav.fontMetrics()
        titles = [nav.item(k).text() for k in range(nav.count())]
        widest = max(metrics.horizontalAdvance(title) for title in titles)
        if widest > self.width() * NAV_SHARE:  # large text on a small screen: titles wrap
            widest = max(metrics.horizontalAdvance(word) for title in titles for word in title.split())
        frame = 2 * nav.frameWidth() + 4 * nav.spacing() + metrics.averageCharWidth() * 2
        nav.setFixedWidth(widest + frame)
        char = self.lesson.fontMetrics().averageCharWidth()
        self.lesson.setMinimumWidth(MIN_LESSON_CHARS * char)
        total = self.width()
        nav_width = nav.width() if nav.isVisibleTo(self) else 0
        panel_room = total - nav_width - self.panel_area.minimumSizeHint().width()  # the panel first
        lesson = min(LESSON_CHARS * char, total // 3, max(panel_room, MIN_LESSON_CHARS * char))
        lesson = lesson if self.lesson.isVisibleTo(self) else 0
        self.splitter.setSizes([nav_width, max(total - nav_width - lesson, 0), lesson])

    def showEvent(self, event) -> None:
        super().showEvent(event)
        if not self.fitted:
            self.fitted = True
            self.fit_side_columns()

    def changeEvent(self, event) -> None:
        super().changeEvent(event)
        if event.type() == QEvent.Type.FontChange:  # the widgets have the new text size now
            self.fit_side_columns()

    def set_presenting(self, on: bool) -> None:
        """Presenting: hide the navigation, the lesson pane, the panels' control columns and the
        menu and status bars, so the step's view gets the window; off shows them again (the
        lesson pane only if it was on). The shortcuts keep working (they belong to the window)."""
        self.presenting = on
        self.nav.setVisible(not on)
        self.lesson.setVisible(not on and self.lesson_action.isChecked())
        self.menuBar().setVisible(not on)
        self.statusBar().setVisible(not on)
        for panel in self.panels.values():
            panel.set_presenting(on)
        if self.presenting_action.isChecked() != on:
            self.presenting_action.setChecked(on)
        self.fit_side_columns()

    def set_lesson_visible(self, on: bool) -> None:
        self.lesson.setVisible(on and not self.presenting)
        self.fit_side_columns()

    def set_theme(self, name: str) -> None:
        apply_theme(QApplication.instance(), name)
        self.theme = name
        for action in self.theme_actions.actions():
            action.setChecked(action.data() == name)
        self.restyle_plots()

    def restyle_plots(self) -> None:
        """Give the plots the theme's colours and the text size: the panel on screen now, every
        other built panel when it is next shown (restyling them all at once took most of a
        theme switch)."""
        self.unstyled = set(self.panels)
        if self.current() is not None:
            self.unstyled.discard(self.current().key)
            style_plots(self.current())

    def _on_tour(self, line: str) -> None:
        self.tour_label.setText(line)
        self.tour_label.setVisible(bool(line))
        self.end_tour_action.setEnabled(bool(line))

    def toggle_full_screen(self, on: bool) -> None:
        """Full screen, also without a window manager: asking X for it does nothing there, so if
        the window has not filled the screen shortly after, it takes the screen's geometry itself."""
        if on:
            self.window_geometry = self.geometry()
            self.showFullScreen()
            QTimer.singleShot(FULL_SCREEN_WAIT_MS, self._fill_screen)
        else:
            self.showNormal()
            if self.filled_by_hand:
                self.filled_by_hand = False
                self.setGeometry(self.window_geometry)

    def _fill_screen(self) -> None:
        screen = self.screen().geometry()
        if self.isFullScreen() and self.frameGeometry() != screen:
            self.filled_by_hand = True
            self.setGeometry(screen)

    def report_exception(self, kind, value, tb) -> None:
        """Unexpected errors: full traceback to the log, one line in the status bar; the app goes on."""
        log.error("Unexpected error", exc_info=(kind, value, tb))
        self.statusBar().showMessage(f"Unexpected error ({kind.__name__}): {value}. {log_file.where()}")

    def about(self) -> None:
        QMessageBox.about(self, "About Attention Lab", about_html())

    def _build_menus(self) -> None:
        def action(menu, text, slot, *keys, checkable=False):
            act = QAction(text, self)
            act.setShortcuts([QKeySequence(k) for k in keys])
            act.setCheckable(checkable)
            (act.toggled if checkable else act.triggered).connect(slot)
            menu.addAction(act)
            self.addAction(act)  # so its shortcut works while the menu bar is hidden (presenting)
            return act

        bar = self.menuBar()
        file_menu = bar.addMenu("&File")
        room = self.classroom
        action(file_menu, "&Open lesson…", room.open_dialog, QKeySequence.StandardKey.Open)
        action(file_menu, "&Save lesson…", room.save_dialog, QKeySequence.StandardKey.Save)
        recent = file_menu.addMenu("&Recent lessons")
        recent.aboutToShow.connect(lambda: room.fill_recent_menu(recent))
        builtin = file_menu.addMenu("&Built-in lessons")
        builtin.aboutToShow.connect(lambda: room.fill_builtin_menu(builtin))
        action(file_menu, "&Hide controls for this lesson…", room.hide_controls_dialog)
        file_menu.addSeparator()
        for cls in self.classes:
            for text, method in cls.file_actions:
                action(file_menu, text, lambda _=False, k=cls.key, m=method: getattr(self.show_panel(k), m)())
        action(file_menu, "&Export panel as PNG…", room.export_panel_dialog, "Ctrl+E")
        action(file_menu, "Export experiment as &Python…", room.export_script_dialog, "Ctrl+Shift+E")
        file_menu.addSeparator()
        # Ctrl+Q (Cmd+Q on macOS) everywhere: some platforms bind no standard Quit key.
        self.quit_action = action(file_menu, "&Quit", self.close, "Ctrl+Q")
        view = bar.addMenu("&View")
        self.lesson_action = action(view, "&Lesson pane", self.set_lesson_visible, "Ctrl+L", checkable=True)
        self.presenting_action = action(view, "&Presenting", self.set_presenting, "F5", checkable=True)
        self.full_screen_action = action(view, "&Full screen", self.toggle_full_screen, "F11", checkable=True)
        view.addSeparator()
        action(
            view,
            "&Larger text",
            lambda: self.set_font_scale(self.font_scale * SCALE_STEP),
            "Ctrl+=",
            "Ctrl++",
        )
        action(view, "&Smaller text", lambda: self.set_font_scale(self.font_scale / SCALE_STEP), "Ctrl+-")
        action(view, "&Normal text size", lambda: self.set_font_scale(1.0), "Ctrl+0")
        view.addSeparator()
        self.predict_action = action(
            view,
            "&Predict, then reveal",
            lambda on: self.reveal.set_enabled(on, self.current()),
            "Ctrl+Shift+R",
            checkable=True,
        )
        action(view, "&Reveal the result", self.reveal.reveal, "Ctrl+R")
        action(view, "Longest &prompt read…", self.ask_context)
        theme_menu = view.addMenu("&Theme")
        self.theme_actions = QActionGroup(self)
        for name in THEMES:
            act = theme_menu.addAction(name.capitalize())
            act.setData(name)
            act.setCheckable(True)
            act.triggered.connect(lambda _=False, n=name: self.set_theme(n))
            self.theme_actions.addAction(act)
        go = bar.addMenu("&Go")
        action(go, "&Next step", self.next_step, "PgDown")
        action(go, "&Previous step", self.previous_step, "PgUp")
        action(go, "Next &panel", lambda: self.move_panel(1), "Ctrl+PgDown")
        action(go, "Previous p&anel", lambda: self.move_panel(-1), "Ctrl+PgUp")
        help_menu = bar.addMenu("&Help")
        action(help_menu, "&Tour: the article in 20 minutes", lambda: room.open_lesson(tour_file()), "Ctrl+T")
        self.end_tour_action = action(help_menu, "&End the tour", room.tour.stop, "Esc")
        self.end_tour_action.setEnabled(False)
        action(help_menu, "&About Attention Lab", self.about)

    def ask_context(self) -> None:
        tokens, ok = QInputDialog.getInt(
            self, "Longest prompt read",
            "Read at most this many tokens of a prompt; a longer one keeps its first special token\n"
            "and its last tokens, and says so. 0: as many as the model's own context holds, where\n"
            "memory allows.",
            self.context, 0, 10_000_000,
        )  # fmt: skip
        if not ok:
            return
        try:
            self.set_context(tokens)
        except ValueError as exc:  # 1 token: nothing to read after the first
            QMessageBox.warning(self, "Longest prompt read", str(exc))

    def set_context(self, tokens: int, rerun: bool = True) -> None:
        """Read at most ``tokens`` of every prompt from now on (0: the model's own context); with
        ``rerun``, the panel on screen reads its prompt again."""
        from core.interp.prediction import set_context_limit

        set_context_limit(tokens or None)
        self.context = tokens
        said = f"at most {tokens:,} tokens" if tokens else "as many tokens as the model's context holds"
        self.statusBar().showMessage(f"Prompts are read to {said}.", 8000)
        if rerun:
            self.current().reread()

    # --- remembered state -------------------------------------------------------------------
    def _restore(self) -> None:
        s = settings()
        if s.contains("window/geometry"):
            self.restoreGeometry(s.value("window/geometry"))
        else:  # 1400 × 860, or the screen when it is smaller
            room = self.screen().availableGeometry()
            self.resize(min(1400, room.width()), min(860, room.height()))
        if s.contains("window/splitter"):
            self.fitted = self.splitter.restoreState(s.value("window/splitter"))
        theme = str(s.value("view/theme", "system"))
        self.set_theme(theme if theme in THEMES else "system")
        try:
            self.set_font_scale(float(s.value("view/font_scale", 1.0)))
        except (TypeError, ValueError):
            self.set_font_scale(1.0)
        try:
            context = int(s.value("models/context", 0))
        except (TypeError, ValueError):
            context = 0
        if context >= 2:  # a value set_context refuses (a hand-edited file) leaves the model's own
            self.set_context(context, rerun=False)
        lesson_visible = str(s.value("view/lesson", "true")) == "true"
        self.lesson_action.setChecked(lesson_visible)
        self.lesson.setVisible(lesson_visible)
        self.set_presenting(str(s.value("view/presenting", "false")) == "true")
        last = str(s.value("view/panel", self.keys()[0]))
        self.show_panel(last if last in self.keys() else self.keys()[0])

    def save_state(self) -> None:
        s = settings()
        s.setValue("window/geometry", self.saveGeometry())
        s.setValue("window/splitter", self.splitter.saveState())
        s.setValue("view/theme", self.theme)
        s.setValue("view/font_scale", self.font_scale)
        s.setValue("models/context", self.context)
        s.setValue("view/lesson", "true" if self.lesson_action.isChecked() else "false")
        s.setValue("view/presenting", "true" if self.presenting else "false")
        s.setValue("view/panel", self.current().key)
        s.sync()

    def closeEvent(self, event) -> None:
        self.save_state()
        worker.cancel_all()
        super().closeEvent(event)
