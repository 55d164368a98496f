"""The panel base class: a thin view over core with lecture steps and an inline message bar.

A subclass sets the class attributes and gives one Step page per lecture step (docs/architecture.md):

    class MyPanel(Panel):            # PanelEntry("mine", "My panel", "app.panels.mine:MyPanel")
        steps = ("First", "Second")  # lecture steps, in order (lesson sections follow them)

        def __init__(self, parent=None):
            super().__init__(parent)
            self.first, self.second = FirstStep(), SecondStep()
            self.add_steps(self.first, self.second)
            self.set_step(0)

        def exercise(self): ...      # drive every control once (smoke command and tests)

Each step names the views it can export (``Step.views``) and what "predict, then reveal" covers
on it (``Step.result_views``).

Bad input goes to the message bar and the previous valid state stays on screen. Control columns
built with ``app.widgets.side_column`` are hidden while the window is presenting.
"""

from __future__ import annotations

from typing import ClassVar

from PySide6.QtCore import QEvent, Signal
from PySide6.QtWidgets import QBoxLayout, QSplitter, QTabBar, QVBoxLayout, QWidget

import app.shutdown  # noqa: F401  (deletes panels in order at exit, see there)
from app.panels import entry_of
from app.panels.scripts import Script, assemble
from app.panels.step import Notice, Step
from app.widgets.message_bar import MessageBar
from app.widgets.page_stack import PageStack
from app.widgets.side_column import SIDE_COLUMN


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


HEAD_PANEL = "inside_head"  # the panel ``openHead`` opens


class Panel(QWidget):
    steps: ClassVar[tuple[str, ...]] = ("Overview",)

    stepChanged = Signal(int)
    openPanel = Signal(str)  # ask the main window to show the panel with this key
    # ask the main window to open Inside a head on {source, prompt, layer, head, query, key}:
    # layers, heads and positions from 1, query 0 = the last token
    openHead = Signal(dict)

    def __init__(self, parent=None):
        super().__init__(parent)
        self.step = 0
        self.message = MessageBar()
        self.step_bar = StepBar(self.steps)
        self.step_bar.setVisible(len(self.steps) > 1)
        self.step_bar.currentChanged.connect(lambda i: i != self.step and self.set_step(i))
        root = QVBoxLayout(self)
        root.addWidget(self.step_bar)
        root.addWidget(self.message)
        self.body = QVBoxLayout()
        root.addLayout(self.body, 1)
        self.pages: PageStack | None = None  # the Step pages, once add_steps has run
        self._lives: list = []  # every Live the pages draw from, once each (add_steps)

    def add_steps(self, *pages: Step, into: QBoxLayout | QSplitter | None = None) -> None:
        """One Step page per lecture step, in order, stacked into ``into`` (a layout or splitter;
        default: the body, under the message bar). Their states' refusals and notices reach the
        message bar. Steps that walk through one picture may name the same page."""
        if len(pages) != len(self.steps):
            raise ValueError(f"{self.key} names {len(self.steps)} steps but gives {len(pages)} pages.")
        self.pages = PageStack()  # only the step on screen sets the panel's least size
        self.step_pages = pages
        lives = self._lives
        for page in dict.fromkeys(pages):  # a page may serve several consecutive steps
            self.pages.addWidget(page)
            page.told.connect(lambda text, level, page=page: self._tell(page, text, level))
            for live in page.lives:
                if all(live is not seen for seen in lives):
                    lives.append(live)
                    live.failed.connect(self.show_message)
                    # Connected after the pages' own slots: the step on screen has redrawn by then.
                    live.changed.connect(lambda: self.show_notice(self.pages.currentWidget().notice))
        if isinstance(into, QSplitter):
            into.addWidget(self.pages)
        else:
            (self.body if into is None else into).addWidget(self.pages, 1)

    @property
    def key(self) -> str:
        """As written on this panel's PANELS entry."""
        return entry_of(type(self)).key

    @property
    def title(self) -> str:
        """As written on this panel's PANELS entry."""
        return entry_of(type(self)).title

    def lives(self) -> list:
        """The Lives this panel's steps draw from."""
        return list(self._lives)

    def reread(self) -> None:
        """Read the prompt again (the longest prompt read changed): every Live whose state holds a
        prompt computes anew."""
        for live in self.lives():
            if hasattr(live.state, "prompt"):
                live.apply()

    def set_step(self, i: int) -> None:
        """Go to lecture step ``i`` (clamped to the panel's steps)."""
        i = max(0, min(int(i), len(self.steps) - 1))
        self.step = i  # first: the tab bar's own change signal then finds this step already set
        self.step_bar.setCurrentIndex(i)
        self.step_bar.fit()  # the current step's tab keeps its full name
        self.show_step(i)
        self.stepChanged.emit(i)

    def _tell(self, page: Step, text: str, level: str) -> None:
        """A step's passing message (empty text clears the bar), shown only while it is on screen."""
        if page.is_current():
            self.show_notice((text, level) if text else None)

    def show_step(self, i: int) -> None:
        """Show step ``i``'s page, drawn with the newest state, and its notice. Never changes a
        setting: paging through a lecture leaves every state as it is."""
        if self.pages is None:
            return
        page = self.step_pages[i]
        self.pages.setCurrentWidget(page)
        page.refresh()
        self.show_notice(page.notice)

    def show_notice(self, notice: Notice) -> None:
        """Show a (text, level) notice in the message bar; None clears it."""
        if notice is None:
            self.clear_message()
        else:
            self.show_message(*notice)

    def set_presenting(self, on: bool) -> None:
        """Hide the control columns (presenting) or show them again."""
        for column in self.findChildren(QWidget):
            if column.property(SIDE_COLUMN):
                column.setVisible(not on)

    def show_message(self, text: str, level: str = "error") -> None:
        self.message.show_message(text, level)

    def clear_message(self) -> None:
        self.message.clear_message()

    def script(self, i: int) -> str:
        """Step ``i``'s experiment as a Python script over core (File → Export experiment as Python)."""
        if self.step_pages[i].live.result is None:
            raise ValueError(f"{self.steps[i]} has nothing computed yet: wait for it, then export again.")
        return assemble(self.title, i + 1, self.steps[i], self.step_script(i))

    def step_script(self, i: int) -> Script:
        """Step ``i``'s Script; a panel whose pages serve several steps says which is which."""
        return self.step_pages[i].script()

    def exercise(self) -> None:
        """Drive every control through typical and extreme values, ending in a state worth a screenshot."""
        for i in range(len(self.steps)):
            self.set_step(i)

    def try_changes(self, live, *changes: dict, back: tuple[str, ...] = ()) -> None:
        """Apply each of ``changes`` to ``live`` (an app.panels.step.Live) in turn and let its work
        land, as ``exercise`` does with bad and extreme values; then put the fields ``back`` (every
        one a change refused or moved) to their defaults."""
        from app import worker

        for change in changes:
            live.apply(**change)
            worker.settle()
        if back:
            live.apply(**{field: getattr(type(live.state), field) for field in back})

    def export(self) -> dict[str, QWidget]:
        """The named views of this panel that can be exported as images or numbers: its steps'."""
        pages = dict.fromkeys(self.step_pages) if self.pages is not None else ()
        return {name: view for page in pages for name, view in page.views().items()}

    def result_views(self, step: int) -> list[QWidget]:
        """The views showing step ``step``'s result, covered in "predict, then reveal" mode."""
        return self.step_pages[step].result_views() if self.pages is not None else []
