"""app.worker's cancel: what a test (or the closing window) cancels stops, and so does what its
end starts."""

import threading
import time

from PySide6.QtCore import QThreadPool

from app import worker
from tests.app.conftest import idle
from tests.waits import patience


def ticks(progress) -> None:
    """Runs until cancelled: the next progress call after cancel() raises."""
    while True:
        progress(0, 1)
        time.sleep(0.001)


def test_cancel_all_also_cancels_the_tasks_that_the_ends_start(qtbot):
    started = []

    def again() -> None:  # an end that starts more work, as an Auto loop or a queued load does
        started.append(worker.run_task(ticks, on_progress=lambda *_: None))

    worker.run_task(ticks, on_progress=lambda *_: None, on_finished=again)
    assert worker.cancel_all(patience(10))
    assert len(started) == 1 and started[0].cancelled and not worker.busy()


def test_a_task_cancelled_before_it_starts_never_runs(qtbot):
    release, ran, ended = threading.Event(), [], []
    pool = QThreadPool.globalInstance()
    for _ in range(pool.maxThreadCount()):  # every thread busy: the next task waits its turn
        worker.run_task(release.wait, patience(10))
    waiting = worker.run_task(ran.append, "ran", on_finished=lambda: ended.append(True))
    waiting.cancel()
    release.set()
    idle(10)
    assert ran == [] and ended == [True]
