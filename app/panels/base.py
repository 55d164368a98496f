"""The panel base class: a thin view over core with lecture steps and an inline message bar.

A subclass sets the class attributes and builds its view into ``self.body``:

    class MyPanel(Panel):
        key = "mine"                 # id: lesson file resources/lessons/mine.md, settings, screenshots
        title = "My panel"           # the navigation list's text
        steps = ("First", "Second")  # lecture steps, in order

        def show_step(self, i): ...  # show step i (called by set_step)
        def exercise(self): ...      # drive every control once (smoke command and tests)
        def export(self): ...        # {name: widget} of the views that can be exported
        def result_views(self, i): ... # the views "predict, then reveal" covers at step i

Bad input goes to ``show_message`` and the previous valid state stays on screen. Control columns
built with ``app.widgets.controls.side_column`` are hidden while the window is presenting.
"""

from __future__ import annotations

from typing import ClassVar

from PySide6.QtCore import QEvent, Signal
from PySide6.QtWidgets import QTabBar, QVBoxLayout, QWidget

from app.widgets.controls import SIDE_COLUMN
from app.widgets.message_bar import MessageBar


class StepBar(QTabBar):
    """The steps as tabs "1. Name"; when they do not all fit, the other steps show their number
    only (the full name in the tooltip), so no tab is cut or scrolled out of sight."""

    def __init__(self, steps: tuple[str, ...]):
        super().__init__()
        self.names = [f"{number}. {name}" for number, name in enumerate(steps, 1)]
        self.compact = False
        self.setExpanding(False)
        self.setDocumentMode(True)
        self.setUsesScrollButtons(False)
        for k, name in enumerate(self.names):
            self.addTab(name)
            self.setTabToolTip(k, name)
        self.currentChanged.connect(lambda _: self.fit())

    def fit(self) -> None:
        self._label(False)
        self._label(sum(self.tabSizeHint(k).width() for k in range(self.count())) > self.width())

    def _label(self, compact: bool) -> None:
        for k, name in enumerate(self.names):
            text = name if not compact or k == self.currentIndex() else str(k + 1)
            if self.tabText(k) != text:
                self.setTabText(k, text)
        self.compact = compact

    def minimumSizeHint(self):
        hint = super().minimumSizeHint()
        hint.setWidth(0)  # the tabs shorten to numbers instead
        return hint

    def resizeEvent(self, event) -> None:
        super().resizeEvent(event)
        self.fit()

    def changeEvent(self, event) -> None:
        super().changeEvent(event)
        if event.type() == QEvent.Type.FontChange:
            self.fit()


class Panel(QWidget):
    key: ClassVar[str]
    title: ClassVar[str]
    steps: ClassVar[tuple[str, ...]] = ("Overview",)
    # File-menu entries the main window adds for this panel: (menu text, name of a method to call
    # once the panel is shown), e.g. ("Open model folder…", "choose_folder").
    file_actions: ClassVar[tuple[tuple[str, str], ...]] = ()

    stepChanged = Signal(int)
    openPanel = Signal(str)  # ask the main window to show the panel with this key

    def __init__(self, parent=None):
        super().__init__(parent)
        self.step = 0
        self.message = MessageBar()
        self.step_bar = StepBar(self.steps)
        self.step_bar.setVisible(len(self.steps) > 1)
        self.step_bar.currentChanged.connect(self.set_step)
        root = QVBoxLayout(self)
        root.addWidget(self.step_bar)
        root.addWidget(self.message)
        self.body = QVBoxLayout()
        root.addLayout(self.body, 1)

    @classmethod
    def lesson_file(cls) -> str:
        return f"{cls.key}.md"

    def set_step(self, i: int) -> None:
        """Go to lecture step ``i`` (clamped to the panel's steps)."""
        i = max(0, min(int(i), len(self.steps) - 1))
        self.step = i
        self.step_bar.blockSignals(True)
        self.step_bar.setCurrentIndex(i)
        self.step_bar.blockSignals(False)
        self.step_bar.fit()  # the current step's tab keeps its full name
        self.show_step(i)
        self.stepChanged.emit(i)

    def show_step(self, i: int) -> None:
        """Show step ``i``; panels with several steps override this."""

    def set_presenting(self, on: bool) -> None:
        """Hide the control columns (presenting) or show them again."""
        for column in self.findChildren(QWidget):
            if column.property(SIDE_COLUMN):
                column.setVisible(not on)

    def show_message(self, text: str, level: str = "error") -> None:
        self.message.show_message(text, level)

    def clear_message(self) -> None:
        self.message.clear_message()

    def exercise(self) -> None:
        """Drive every control through typical and extreme values, ending in a state worth a screenshot."""
        for i in range(len(self.steps)):
            self.set_step(i)

    def export(self) -> dict[str, QWidget]:
        """The named views of this panel that can be exported as images or numbers."""
        return {}

    def result_views(self, step: int) -> list[QWidget]:
        """The views showing step ``step``'s result, covered in "predict, then reveal" mode.

        By default the last exportable view visible at that step; override to name others.
        """
        shown = [view for view in self.export().values() if view.isVisibleTo(self)]
        return shown[-1:]
