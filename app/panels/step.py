"""Steps over a live state: the one way a panel turns a control's change into pixels.

    live = Live(SinusoidalState(), compute_sinusoidal)   # frozen state → result, Qt-free
    live.apply(n=1_000)    # compute a candidate; ValueError → ``failed``, the old state stays
    # success → ``changed``: the visible step redraws now, hidden ones when next shown

A ``Step`` is one lecture step's page: it draws ``live.result`` (``draw`` returns a Notice for
the message bar) and binds its controls to fields of ``live.state``. Steps that show the same
numbers share one Live; an independent step owns its own. With ``background=True`` the compute
runs in the worker (``app/worker.py``) with a ``progress(done, total)`` keyword, and only the
newest request is kept: a superseded one is cancelled at its next progress call. One that takes a
``partial`` keyword hands back whole results so far (saying what they lack), each landing as a result;
one that takes ``wait`` may pause with ``wait(seconds)``, which a cancel ends at once.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from dataclasses import replace

from PySide6.QtCore import QObject, Signal
from PySide6.QtWidgets import (
    QFormLayout,
    QHBoxLayout,
    QLabel,
    QLayout,
    QLineEdit,
    QStackedWidget,
    QVBoxLayout,
    QWidget,
)

from app import worker
from app.panels.binding import bind
from app.panels.scripts import Script
from app.widgets.side_column import add, side_column, stretches
from app.widgets.sizing import WholeText
from app.widgets.text import note, scrolling

Notice = tuple[str, str] | None  # (text, level) for the panel's message bar; None clears it


class Live(QObject):
    """A frozen state and the result ``compute(state)`` gives for it, changed only as a whole.

    ``wanted`` is the state the controls show: the last accepted one with any refused changes
    on top. The next change builds on it, so a refused value is not silently forgotten.
    """

    changed = Signal()  # state and result were replaced
    failed = Signal(str)  # a change was refused; the text says why and what to do
    busy = Signal(bool)  # a background compute started (True) or ended (False)
    progressed = Signal(int, int)  # (done, total) of the background compute

    def __init__(self, state, compute: Callable, background: bool = False, start: bool = True):
        super().__init__()
        self.state, self.compute, self.background = state, compute, background
        self.wanted = state  # the state as the bound controls show it, refused changes included
        self.result = None
        self.tasks = worker.Newest()  # background computes: only the newest request lands
        if background:
            if start:  # else no result until the first apply (a costly compute asked for later)
                self._start(state)
        else:
            self.result = compute(state)
            self.state = self.wanted = getattr(self.result, "state", state)  # as _accept settles it

    def apply(self, **change) -> bool:
        """Try ``state`` with ``change``; True when it was accepted (or, in the background, started)."""
        # Built on what the controls show, refused values included: with heads 3 refused for
        # d_model 512, changing d_model to 510 then gives 510 with 3 heads, as the controls say.
        candidate = replace(self.wanted, **change)  # an unknown field is a bug: TypeError
        self.wanted = candidate
        if self.background:
            self._start(candidate)
            return True
        try:
            result = self.compute(candidate)
        except ValueError as exc:
            self.failed.emit(str(exc))
            return False
        self._accept(candidate, result)
        return True

    def _accept(self, state, result) -> None:
        # A compute may settle the state it was given (e.g. keep the table it drew): a result
        # that carries a ``state`` field is the state from now on.
        self.state = self.wanted = getattr(result, "state", state)
        self.result = result
        self.changed.emit()

    def cancel(self) -> bool:
        """Stop the background compute running now (True when there was one): nothing it reports
        lands, and the controls go back to the state whose result is on screen."""
        if not self.tasks.cancel():
            return False
        self.wanted = self.state
        self.changed.emit()
        self.busy.emit(False)
        return True

    @property
    def task(self) -> worker.Task | None:
        """The background compute running now, if any."""
        return self.tasks.task

    def _start(self, candidate) -> None:
        land = lambda result: self._accept(candidate, result)  # noqa: E731
        takes = inspect.signature(self.compute).parameters  # results so far land too; pauses end at a cancel
        self.tasks.start(self.compute, candidate, on_result=land, on_error=self.failed.emit,
                         on_progress=self.progressed.emit, on_partial=land if "partial" in takes else None,
                         on_finished=lambda: self.busy.emit(False), pacing="wait" in takes)  # fmt: skip
        self.busy.emit(True)  # after the start: ``task`` is the new compute


class Step(QWidget):
    """One lecture step's page: draws its Live's result, now if it is the step on screen, else
    the next time it is shown (one "stale" flag per step)."""

    told = Signal(str, str)  # (text, level): a passing message for the bar, while this step is shown

    def __init__(self, live: Live):
        super().__init__()
        self.live = live
        self.lives = [live]  # every Live this step draws from: its own first, then followed ones
        self.notice: Notice = None
        self.stale = True
        live.changed.connect(self.mark_stale)

    def follow(self, live: Live) -> Live:
        """Draw from ``live`` too (e.g. a slow background measurement beside quick view settings):
        its changes make this step stale, its refusals reach the message bar. Returns ``live``."""
        self.lives.append(live)
        live.changed.connect(self.mark_stale)
        return live

    @property
    def state(self):
        return self.live.state

    @property
    def result(self):
        return self.live.result

    def draw(self, result) -> Notice:
        """Make the views show ``result``; return a notice for the message bar or None."""
        raise NotImplementedError

    def script(self) -> Script:
        """This step's experiment as code over core, for ``Panel.script`` (app/panels/scripts.py)."""
        raise NotImplementedError

    def views(self) -> dict[str, QWidget]:
        """This step's views that can be exported as images or numbers, by name."""
        return {}

    def result_views(self) -> list[QWidget]:
        """What "predict, then reveal" covers here: by default its last view on screen."""
        return [view for view in self.views().values() if view.isVisibleTo(self)][-1:]

    def apply(self, **change) -> bool:
        return self.live.apply(**change)

    def bind(self, control: QWidget, field: str, convert: Callable = lambda v: v) -> QWidget:
        """``control`` writes ``field`` of this step's state and shows it after every change."""
        return bind(control, self.live, field, convert)

    def tell(self, text: str, level: str = "error") -> None:
        """Say something that is not a state's refusal (e.g. a value was capped) in the message bar."""
        self.told.emit(text, level)

    def is_current(self) -> bool:
        stack = self.parentWidget()
        return not isinstance(stack, QStackedWidget) or stack.currentWidget() is self

    def mark_stale(self) -> None:
        self.stale = True
        if self.is_current():
            self.refresh()

    def later(self) -> Notice:
        """For ``draw`` with nothing of this step's yet: keep the picture, draw the next result."""
        self.stale = True
        return self.notice

    def refresh(self) -> None:
        """Draw the newest result if this step has not drawn it yet; with no result (not computed
        yet, or reset), no notice."""
        if self.live.result is None:
            self.notice = None
        elif self.stale:
            self.stale = False
            self.notice = self.draw(self.live.result)

    def layout_with(
        self,
        intro: str | QLabel | None,
        controls: QLayout | QWidget | None,
        view: QLayout | QWidget,
        notes: tuple[QWidget, ...] = (),
        wide: tuple[tuple[str, QWidget], ...] = (),
        *,
        on_top: bool = False,
        flush: bool = False,
    ) -> None:
        """Lay out this page, the one way every step does. From the top: ``intro`` (text, or a label
        the step rewrites), then ``wide`` (label, field) rows across the page (typed text shown whole
        up to FIELD_COLUMN_CHARS characters), then either

        - the controls in a column at the left, hidden while presenting, with ``notes`` under them
          (scrolling when they need more height than there is), the view beside them; controls that
          stretch themselves (a table under a form) take the column's whole height; or
        - with ``on_top`` (or no controls): the controls, the view, then the notes, one under another.

        The view, a widget or a layout, takes the rest of the room. ``flush``: no margin round the
        page (a page beside its panel's own control column)."""
        page = QVBoxLayout(self)
        if flush:
            page.setContentsMargins(0, 0, 0, 0)
        if intro is not None:
            page.addWidget(intro if isinstance(intro, QLabel) else note(intro))
        if wide:
            fields = QFormLayout()
            for label, field in wide:
                fields.addRow(label, field)
                if isinstance(field, QLineEdit):  # a TextBox wraps its text instead
                    WholeText(field)
            page.addLayout(fields)
        if on_top or controls is None:
            if controls is not None:
                add(page, controls)
            add(page, view, 1)
            for label in notes:
                page.addWidget(label)
            return
        if stretches(controls):  # it shares out the column's height itself
            column = controls
        else:
            column = QVBoxLayout()
            add(column, controls)
            if not notes:
                column.addStretch(1)
        if notes:
            column.addWidget(scrolling(*notes), 1)
        row = QHBoxLayout()
        row.addWidget(side_column(column))
        add(row, view, 1)
        page.addLayout(row, 1)
