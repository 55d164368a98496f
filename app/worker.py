"""Long work off the UI thread: QThreadPool tasks with progress, cancel and error signals.

    task = run_task(core_function, arg, on_result=show, on_error=panel.show_message,
                    on_progress=bar.update)
    task.cancel()   # the next progress() call inside core_function raises Cancelled

With ``on_progress`` given, the function is called with a keyword ``progress(done, total)``;
with ``pacing``, a keyword ``wait(seconds)`` that returns after ``seconds``, or raises at once
when the task is cancelled (a pause between steps that holds nothing up).
"""

from __future__ import annotations

import logging
import threading
import time
import traceback
from collections.abc import Callable, Iterator
from contextlib import contextmanager

from PySide6.QtCore import QCoreApplication, QObject, QThreadPool, Signal

from app import log_file

log = logging.getLogger(__name__)

_active: set[Task] = set()
_watchers: list[Callable[[Task], None]] = []  # see watching()


class Cancelled(Exception):
    """Raised inside a task's progress callback once the task has been cancelled."""


class Task(QObject):
    """Handle on one background call; its signals arrive on the UI thread."""

    progressed = Signal(int, int)
    arrived = Signal(object)  # a partial result
    succeeded = Signal(object)
    failed = Signal(str)
    finished = Signal()

    def __init__(
        self,
        fn: Callable,
        args: tuple,
        kwargs: dict,
        with_progress: bool,
        with_partial: bool = False,
        pacing: bool = False,
    ):
        super().__init__()
        self.fn, self.args, self.kwargs = fn, args, kwargs
        self.with_progress, self.with_partial, self.pacing = with_progress, with_partial, pacing
        self.cancelled = False
        self.done = False
        self._stopped = threading.Event()  # set by cancel: ends a wait at once

    def cancel(self) -> None:
        self.cancelled = True
        self._stopped.set()

    def _wait(self, seconds: float) -> None:
        if self._stopped.wait(seconds):
            raise Cancelled

    def _progress(self, done: int, total: int) -> None:
        if self.cancelled:
            raise Cancelled
        self.progressed.emit(int(done), int(total))

    def _partial(self, value) -> None:
        if self.cancelled:
            raise Cancelled
        self.arrived.emit(value)

    def _execute(self) -> None:
        try:
            if self.cancelled:  # cancelled while it waited for a free thread: it never starts
                return
            kwargs = dict(self.kwargs)
            if self.with_progress:
                kwargs["progress"] = self._progress
            if self.with_partial:
                kwargs["partial"] = self._partial
            if self.pacing:
                kwargs["wait"] = self._wait
            result = self.fn(*self.args, **kwargs)
            if not self.cancelled:
                self.succeeded.emit(result)
        except Cancelled:
            pass
        except (ValueError, OSError, MemoryError, ImportError) as exc:
            self.failed.emit(str(exc) or type(exc).__name__)
        except Exception as exc:  # a bug: report it in the UI and in the log, never crash
            log.error("Background task failed:\n%s", traceback.format_exc())
            self.failed.emit(f"Unexpected error ({type(exc).__name__}): {exc}. {log_file.where()}")
        finally:
            self.done = True
            self.finished.emit()


def run_task(
    fn: Callable,
    *args,
    on_result: Callable | None = None,
    on_error: Callable[[str], None] | None = None,
    on_progress: Callable[[int, int], None] | None = None,
    on_partial: Callable | None = None,
    on_finished: Callable[[], None] | None = None,
    pacing: bool = False,
    **kwargs,
) -> Task:
    """Start ``fn(*args, **kwargs)`` in the global thread pool and return its Task.

    With ``on_progress``, ``fn`` gets a ``progress(done, total)`` keyword; with ``on_partial``, a
    ``partial(value)`` keyword that hands ``on_partial`` a result so far; with ``pacing``, a
    ``wait(seconds)`` keyword. All three raise once the task is cancelled.

    ``on_finished`` runs once the task ends in any way (result, error or cancel). Pass it here
    rather than connecting ``task.finished`` afterwards: a short task may end before that line.
    """
    task = Task(fn, args, kwargs, on_progress is not None, on_partial is not None, pacing)
    if on_result:
        task.succeeded.connect(on_result)
    if on_error:
        task.failed.connect(on_error)
    if on_progress:
        task.progressed.connect(on_progress)
    if on_partial:
        task.arrived.connect(on_partial)
    if on_finished:
        task.finished.connect(on_finished)
    _active.add(task)
    task.finished.connect(lambda: _active.discard(task))
    for watch in _watchers:
        watch(task)
    QThreadPool.globalInstance().start(task._execute)  # a plain callable: Qt owns no Python object
    return task


@contextmanager
def watching(on_start: Callable[[Task], None]) -> Iterator[None]:
    """Inside the block, ``on_start(task)`` is called for every task started, before it runs (the
    commands that build panels offscreen say how far the panels' tasks have got)."""
    _watchers.append(on_start)
    try:
        yield
    finally:
        _watchers.remove(on_start)


class Newest:
    """One slot for background tasks of which only the newest lands: starting a task, or
    ``cancel()``, cancels the one before, and whatever that one still reports (result, error,
    progress, end) is dropped.

        loads = Newest()
        loads.start(load, source, on_result=show)   # a second start() supersedes the first
    """

    def __init__(self):
        self.task: Task | None = None
        self._ticket = 0

    @property
    def running(self) -> bool:
        return self.task is not None

    def start(self, fn: Callable, *args, on_finished: Callable[[], None] | None = None, **kwargs) -> Task:
        """``run_task`` in this slot; the callbacks in ``kwargs`` (``on_result``, ``on_error``,
        ``on_progress``) and ``on_finished`` run only while this task is the newest."""
        self.cancel()
        ticket = self._ticket

        def fresh(callback):
            return None if callback is None else (lambda *a: callback(*a) if ticket == self._ticket else None)

        def ended() -> None:
            if ticket == self._ticket:
                self.task = None
                if on_finished is not None:
                    on_finished()

        callbacks = {k: fresh(v) for k, v in kwargs.items() if k.startswith("on_")}
        rest = {k: v for k, v in kwargs.items() if not k.startswith("on_")}
        self.task = run_task(fn, *args, on_finished=ended, **callbacks, **rest)
        return self.task

    def cancel(self) -> bool:
        """Cancel the running task (True when there was one); nothing it reports lands."""
        self._ticket += 1
        task, self.task = self.task, None
        if task is not None:
            task.cancel()
        return task is not None


def busy() -> bool:
    """True while any task is still running or its results are still to be delivered."""
    return bool(_active)


def running() -> list[str]:
    """The names of the functions of the tasks still running or still to report, sorted."""
    return sorted(getattr(task.fn, "__qualname__", repr(task.fn)) for task in _active)


def wait_idle(timeout_s: float = 60.0) -> bool:
    """Process events until every task has finished and reported (for tests and smoke)."""
    deadline = time.monotonic() + timeout_s
    while _active and time.monotonic() < deadline:
        QCoreApplication.processEvents()
        time.sleep(0.005)
    QCoreApplication.processEvents()
    return not _active


def settle(timeout_s: float = 300.0) -> None:
    """``wait_idle``, where work still running after ``timeout_s`` is a failure (a panel's
    ``exercise``, the smoke): TimeoutError naming that work."""
    if not wait_idle(timeout_s):
        raise TimeoutError(f"background work still running after {timeout_s:g} s: {', '.join(running())}")


def cancel_all(timeout_s: float | None = 10.0) -> bool:
    """Cancel every task, and every task their callbacks start meanwhile, until none is left or
    ``timeout_s`` has passed (None: until none is left). True when none is left.

    A task stops at its next progress call; a step that calls none (loading a model) runs on. A
    task cancelled before it has started never starts. What a cancelled task still reports is its
    end (``finished``, ``on_finished``), delivered here; a callback that starts a new task on it
    gets that one cancelled too.
    """
    deadline = None if timeout_s is None else time.monotonic() + timeout_s
    pool = QThreadPool.globalInstance()
    while True:
        for task in list(_active):
            task.cancel()
        left_ms = -1 if deadline is None else max(0, int((deadline - time.monotonic()) * 1000))
        pool.waitForDone(left_ms)
        QCoreApplication.processEvents()  # the ends, and whatever their callbacks start
        if not _active or (deadline is not None and time.monotonic() >= deadline):
            return not _active
