"""Test set-up shared by every suite: Qt runs offscreen, models added by the app go to a
temporary data folder, never the user's, a test that hangs fails alone, and no test leaves
background work behind."""

import importlib.util
import os
import sys

import pytest

from core.user_data import OVERRIDE
from tests.waits import patience

# A test that hangs fails alone, with a traceback, after TEST_S (pytest-timeout), scaled like every
# wait; the few tests marked ``slow`` (a whole-app tour, every exported script) get SLOW_S.
TEST_S = 60
SLOW_S = 300

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")


@pytest.fixture(autouse=True, scope="session")
def data_folder(tmp_path_factory):
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv(OVERRIDE, str(tmp_path_factory.mktemp("user-data")))
        yield


@pytest.fixture(autouse=True)
def no_work_left():
    """After every test the background work it left (a run, an Auto loop, a load) is cancelled and
    drained, and the widgets pytest-qt closed are deleted with their pending timers (which could
    start more), so the next test starts idle however this one ended. Work that does not stop
    fails this test's teardown, named, rather than the next tests' set-up."""
    yield
    if "PySide6.QtCore" not in sys.modules:  # a test without Qt has no background work
        return
    from PySide6.QtCore import QCoreApplication, QEventLoop, QTimer

    from app import worker

    if QCoreApplication.instance() is None:
        return
    stopped = worker.cancel_all(patience(60))
    QCoreApplication.processEvents()  # what that set off (a zero-delay timer) runs on live widgets
    loop = QEventLoop()  # an event loop deletes what deleteLater() left, in the order it was posted
    QTimer.singleShot(0, loop.quit)
    loop.exec()
    stopped = worker.cancel_all(patience(60)) and stopped  # whatever their deletion set off
    assert stopped, f"background work still running after it was cancelled: {worker.running()}"


def pytest_collection_modifyitems(config, items):
    """Every test gets its time limit (TEST_S, or SLOW_S when marked ``slow``) unless it names
    its own. Without the 'models' extra (torch), a test marked ``models`` is skipped, so the lite
    install's suite passes with or without ``-m "not models"``."""
    for item in items:
        if item.get_closest_marker("timeout") is None:
            seconds = SLOW_S if item.get_closest_marker("slow") else TEST_S
            item.add_marker(pytest.mark.timeout(patience(seconds)))
    if importlib.util.find_spec("torch") is not None:
        return
    skip = pytest.mark.skip(reason="needs the 'models' extra (torch)")
    for item in items:
        if "models" in item.keywords:
            item.add_marker(skip)
