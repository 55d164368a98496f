import subprocess
import sys
from pathlib import Path

import pyqtgraph as pg
import pytest
from PySide6.QtCore import Qt

from app.about import versions
from app.panels import PANELS, entry_of
from app.panels.base import Panel
from app.settings import settings
from resources import lesson_text
from tests.app.conftest import idle
from tests.waits import patience, patience_ms

ROOT = Path(__file__).resolve().parents[2]


def test_panels_registry_is_well_formed():
    keys = [cls.key for cls in PANELS]
    assert len(keys) == len(set(keys))
    for cls in PANELS:
        loaded = cls.load()
        assert issubclass(loaded, Panel) and entry_of(loaded) is cls  # its key and title are the entry's
        assert cls.title and cls.steps
        text = lesson_text(cls.lesson_file())
        headings = [line for line in text.splitlines() if line.startswith("## ")]
        assert len(headings) >= len(cls.steps) or len(cls.steps) == 1, cls.key


def test_navigation_switches_every_panel(window, qtbot):
    for row, cls in enumerate(PANELS):
        window.nav.setCurrentRow(row)
        assert isinstance(window.current(), cls.load())
        assert window.lesson.toPlainText().strip()
        assert cls.title in window.step_label.text()


def test_page_down_steps_through_the_panel_then_on(window, qtbot):
    panel = window.show_panel(PANELS[0].key)
    panel.set_step(0)
    for expected in range(1, len(panel.steps)):
        qtbot.keyClick(window, Qt.Key.Key_PageDown)
        assert panel.step == expected
    assert f"step {len(panel.steps)} of {len(panel.steps)}" in window.step_label.text()
    qtbot.keyClick(window, Qt.Key.Key_PageDown)
    if len(PANELS) > 1:
        assert window.current() is not panel and window.current().step == 0
        qtbot.keyClick(window, Qt.Key.Key_PageUp)
    assert window.current() is panel and panel.step == len(panel.steps) - 1
    qtbot.keyClick(window, Qt.Key.Key_PageUp)
    assert panel.step == len(panel.steps) - 2


def heading_top(window, step):
    """Where the lesson's (step+1)-th level-2 heading starts, in the pane's scroll coordinates."""
    doc, seen, block = window.lesson.document(), -1, window.lesson.document().begin()
    while block.isValid():
        seen += block.blockFormat().headingLevel() == 2
        if seen == step:
            return doc.documentLayout().blockBoundingRect(block).top()
        block = block.next()
    raise AssertionError(f"no heading for step {step}")


def test_lesson_pane_follows_the_step_at_any_text_size(window, qtbot):
    panel = window.show_panel("qkv")
    bar = window.lesson.verticalScrollBar()
    window.resize(1400, 500)
    for scale in (1.0, 1.6):
        window.set_font_scale(scale)
        for step in (1, 2):
            panel.set_step(step)
            qtbot.waitUntil(
                lambda s=step: bar.value() == min(int(heading_top(window, s)), bar.maximum()),
                timeout=patience_ms(5),
            )
    window.lesson_action.trigger()
    assert not window.lesson.isVisible()


def test_font_scale_reaches_widgets_and_plot_labels(window, qtbot):
    panel = window.show_panel("qkv")
    base = window.base_point_size
    window.set_font_scale(2.0)
    qtbot.wait(1)
    assert panel.font().pointSizeF() == pytest.approx(2 * base)
    axis = panel.scores.score_map.plot.getAxis("left")
    assert axis.style["tickFont"].pointSizeF() == pytest.approx(2 * base)
    window.set_font_scale(100)
    assert window.font_scale == 3.0


def test_controls_hidden_while_the_text_grows_ask_for_the_new_room(window, qtbot):
    from PySide6.QtWidgets import QComboBox

    from app.widgets import LabelledSlider

    panel = window.show_panel("multihead")
    window.show_panel("qkv")  # Multi-head is hidden while the text grows
    window.set_font_scale(2.0)
    window.show_panel("multihead")
    qtbot.wait(1)
    fresh_box = QComboBox()
    fresh_box.addItems([panel.mask_box.itemText(k) for k in range(panel.mask_box.count())])
    fresh_slider = LabelledSlider("", 0.01, 10.0, 1.0, log=True, decimals=3)  # as the panel's
    assert panel.mask_box.minimumSizeHint().width() == fresh_box.minimumSizeHint().width()
    assert panel.scale_slider.readout.minimumWidth() == fresh_slider.readout.minimumWidth()
    column = panel.mask_box.parentWidget()
    assert column.minimumWidth() >= column.layout().minimumSize().width()  # refitted when shown
    fresh_box.deleteLater()
    fresh_slider.deleteLater()


def test_settings_are_remembered(window, qtbot):
    from app.window import MainWindow

    window.set_font_scale(1.5)
    window.set_theme("dark")
    window.lesson_action.setChecked(False)
    window.close()
    s = settings()
    assert float(s.value("view/font_scale")) == pytest.approx(1.5)
    again = MainWindow()
    qtbot.addWidget(again)
    assert again.font_scale == pytest.approx(1.5)
    assert again.theme == "dark" and not again.lesson_action.isChecked()
    again.set_theme("light")


@pytest.mark.models
def test_the_longest_prompt_read_is_a_setting_that_rereads_the_step_on_screen(window, qtbot, llama_folder):
    from app.window import MainWindow
    from core.interp import prediction

    panel = window.show_panel("next_token")
    panel.use_model(llama_folder)
    idle()
    panel.prompt.setText("the cat sat on the mat because the cat")  # 14 tokens
    qtbot.waitUntil(
        lambda: panel.writing.generation is not None and not panel.writing.busy, timeout=patience_ms(30_000)
    )
    try:
        window.set_context(8)  # the step on screen reads its prompt again: its last 8 tokens
        qtbot.waitUntil(lambda: panel.writing.generation.length == 8, timeout=patience_ms(30_000))
        assert "is 14 tokens, more than the 8 read here: tokens 1 to 6 were dropped" in panel.message.text()
        window.close()
        assert int(settings().value("models/context")) == 8
        prediction.set_context_limit(None)
        again = MainWindow()
        qtbot.addWidget(again)
        assert again.context == 8 and prediction.context_limit(panel.model) == 8  # read back at start
        again.set_context(0)
        assert prediction.context_limit(panel.model) == panel.model.max_tokens
        settings().setValue("models/context", 1)  # a value the setting refuses: the window still opens
        third = MainWindow()
        qtbot.addWidget(third)
        assert third.context == 0 and prediction.context_limit(panel.model) == panel.model.max_tokens
    finally:
        prediction.set_context_limit(None)


def test_dark_theme_restyles_plots(window):
    panel = window.show_panel("qkv")
    window.set_theme("dark")
    assert panel.scores.score_map.view.backgroundBrush().color().lightness() < 80
    window.set_theme("light")
    assert panel.scores.score_map.view.backgroundBrush().color().lightness() > 200


def test_dark_theme_recolours_captions_drawn_in_data_units(window):
    from PySide6.QtWidgets import QGraphicsSimpleTextItem

    panel = window.show_panel("memory")
    window.set_theme("dark")
    captions = [
        item
        for view in panel.findChildren(pg.GraphicsView)
        for item in view.scene().items()
        if isinstance(item, QGraphicsSimpleTextItem) and item.isVisible()
    ]
    try:
        assert captions and all(c.brush().color().lightness() > 150 for c in captions)  # light on dark
    finally:
        window.set_theme("light")
    assert all(c.brush().color().lightness() < 100 for c in captions)


def test_theme_and_text_size_reach_panels_built_earlier_once_shown(window):
    import pyqtgraph as pg

    hidden = window.show_panel("scale")
    window.show_panel("qkv")
    window.set_theme("dark")
    window.set_font_scale(1.5)
    assert "scale" in window.unstyled  # waits for its next showing
    window.show_panel("scale")
    assert "scale" not in window.unstyled
    views = hidden.findChildren(pg.GraphicsView)
    axes = [item for v in views for item in v.scene().items() if isinstance(item, pg.AxisItem)]
    assert views and all(v.backgroundBrush().color().lightness() < 80 for v in views)
    assert axes and all(
        a.style["tickFont"].pointSizeF() == pytest.approx(1.5 * window.base_point_size) for a in axes
    )
    window.set_theme("light")
    window.set_font_scale(1.0)


def test_about_lists_versions():
    v = versions()
    assert v["Attention Lab"] and v["NumPy"] and v["Qt"]
    assert "PyTorch" in v


def test_unknown_panel_is_a_clear_error(window):
    with pytest.raises(ValueError, match="No panel called 'nope'"):
        window.show_panel("nope")


def test_window_opens_without_importing_torch(tmp_path):
    code = (
        "import sys\n"
        "from PySide6.QtWidgets import QApplication\n"
        "from app import settings\n"
        f"settings.use_folder({str(tmp_path)!r})\n"
        "app = QApplication([])\n"
        "from app.window import MainWindow\n"
        "w = MainWindow(); w.show(); app.processEvents()\n"
        "print('torch' in sys.modules, 'transformers' in sys.modules)\n"
    )
    env = {"QT_QPA_PLATFORM": "offscreen", "PATH": "/usr/bin:/bin"}
    out = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, env=env, check=True,
        timeout=patience(60),
    )  # fmt: skip
    assert out.stdout.split() == ["False", "False"]


def test_unexpected_errors_reach_the_status_bar(window, caplog):
    try:
        raise RuntimeError("boom")
    except RuntimeError as exc:
        window.report_exception(RuntimeError, exc, exc.__traceback__)
    assert "Unexpected error (RuntimeError): boom" in window.statusBar().currentMessage()
    assert "boom" in caplog.text


def test_panels_file_actions_reach_the_file_menu(window, monkeypatch):
    from app.panels.model import ModelPanel

    calls = []
    monkeypatch.setattr(ModelPanel, "choose_folder", lambda self: calls.append(self))
    file_menu = window.menuBar().actions()[0].menu()
    entry = next(a for a in file_menu.actions() if a.text() == "Open &model folder…")
    entry.trigger()
    assert window.current().key == "model" and calls == [window.current()]


def test_about_says_what_is_read_and_written_and_that_it_is_offline():
    from app import log_file
    from app.about import about_html, files
    from app.settings import settings
    from core.user_data import data_folder

    where = files()
    assert list(where.values()) == [
        settings().fileName(),
        str(data_folder()),
        str(data_folder() / log_file.NAME),
    ]
    text = about_html()
    assert all(path in text for path in where.values())
    assert "works offline" in text and "models add smollm2" in text


@pytest.mark.models
def test_a_head_opens_in_inside_a_head_in_one_click(window, tmp_path):
    """From Inside a decoder's ranking to Inside a head: the same model, prompt, layer and head."""
    from tests.tiny_models import save_tiny_llama

    folder = str(save_tiny_llama(tmp_path / "tiny"))
    decoder = window.show_panel("inside_decoder")
    decoder.use_model(folder)
    idle()
    decoder.knock.prompt.setText("the cat sat on the mat because the cat")
    decoder.rank.target.setText(" the")
    decoder.rank.foil.setText(" because")
    decoder.set_step(1)
    idle()
    cell = decoder.rank.top_head()
    assert cell is not None and f"position {cell['key']})" in decoder.rank.result.looking.what
    decoder.rank.inside_button.click()
    idle()
    head = window.current()
    assert window.current() is window.panels["inside_head"] and head.step == 0
    state = head.live.state
    assert (state.source, state.layer, state.head, state.key) == (
        folder,
        cell["layer"],
        cell["head"],
        cell["key"],
    )
    assert head.live.result is not None and head.live.result.model.source == folder
