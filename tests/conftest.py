"""Test set-up shared by every suite: Qt runs offscreen, and models added by the app go to a
temporary data folder, never the user's."""

import os

import pytest

from core.user_data import OVERRIDE

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")


@pytest.fixture(autouse=True, scope="session")
def data_folder(tmp_path_factory):
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv(OVERRIDE, str(tmp_path_factory.mktemp("user-data")))
        yield
