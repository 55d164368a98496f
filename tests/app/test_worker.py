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


def test_a_paced_task_waits_and_a_cancel_ends_its_wait_at_once(qtbot):
    waited = []

    def paced(seconds: float, wait) -> str:
        start = time.perf_counter()
        try:
            wait(seconds)
        finally:
            waited.append(time.perf_counter() - start)
        return "waited"

    results = []
    worker.run_task(paced, 0.05, on_result=results.append, pacing=True)
    idle(10)
    assert results == ["waited"] and waited[0] >= 0.05
    task = worker.run_task(paced, 60.0, on_result=results.append, pacing=True)
    qtbot.wait(50)
    start = time.perf_counter()
    task.cancel()
    idle(10)
    assert time.perf_counter() - start < 5 and waited[1] < 5 and results == ["waited"]  # cancelled: no result
