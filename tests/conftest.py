"""Test set-up shared by every suite: Qt runs offscreen, and models added by the app go to a
temporary data folder, never the user's."""

import importlib.util
import os

import pytest

from core.user_data import OVERRIDE

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")


@pytest.fixture(autouse=True, scope="session")
def data_folder(tmp_path_factory):
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv(OVERRIDE, str(tmp_path_factory.mktemp("user-data")))
        yield


def pytest_collection_modifyitems(config, items):
    """Without the 'models' extra (torch), a test marked ``models`` is skipped, so the lite
    install's suite passes with or without ``-m "not models"``."""
    if importlib.util.find_spec("torch") is not None:
        return
    skip = pytest.mark.skip(reason="needs the 'models' extra (torch)")
    for item in items:
        if "models" in item.keywords:
            item.add_marker(skip)
