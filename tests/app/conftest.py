import pytest

from app import settings


@pytest.fixture(autouse=True)
def isolated_settings(tmp_path):
    """Every app test starts from empty settings in its own folder."""
    settings.use_folder(str(tmp_path / "settings"))
    settings.settings().clear()
    yield


@pytest.fixture
def window(qtbot):
    from app.window import MainWindow

    win = MainWindow()
    qtbot.addWidget(win)
    win.show()
    yield win
    win.set_font_scale(1.0)
