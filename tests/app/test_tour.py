"""The guided tour visits every panel in the articles' order; predict-then-reveal covers results."""

import json

import pytest
from PySide6.QtCore import Qt

from app import tour
from app.lesson_files import LessonError
from app.panels import PANELS
from app.window import MainWindow

# The order the first article builds the idea, then the second article's retrieval view, then what
# training makes of attention.
ARTICLE_ORDER = [
    "qkv",
    "scale",
    "masks",
    "multihead",
    "model",
    "next_token",
    "inside_decoder",
    "stream",
    "patching",
    "circuits",
    "inside_head",
    "atlas",
    "words",
    "position",
    "cost",
    "linear",
    "bench",
    "memory",
    "induction",
]
LIGHT = [cls for cls in PANELS if cls.key in ("qkv", "scale", "masks")]


def tour_panels() -> list[str]:
    _, stops = tour.load(tour.article_tour())
    return [stop.lesson.panel for stop in stops]


def test_every_panel_is_in_the_tour():
    missing = {cls.key for cls in PANELS} - set(tour_panels())
    assert not missing, f"panels missing from the tour: {sorted(missing)}"


def test_the_tour_follows_the_articles_order():
    first_visits = list(dict.fromkeys(tour_panels()))
    assert all(key in ARTICLE_ORDER for key in first_visits)
    assert first_visits == sorted(first_visits, key=ARTICLE_ORDER.index)
    assert first_visits[-1] == "induction"


@pytest.fixture
def light_window(qtbot):
    """A window with a few quick panels: the tour skips the stops of panels it does not have."""
    win = MainWindow(LIGHT)
    qtbot.addWidget(win)
    win.show()
    return win


def test_page_down_walks_the_tour_and_each_stop_sets_up_its_panel(light_window, qtbot):
    win = light_window
    win.classroom.tour.start()
    stops, known = win.classroom.tour.stops, win.keys()
    assert [s.lesson.panel for s in stops] == [p for p in tour_panels() if p in known]
    for number, stop in enumerate(stops, 1):
        assert win.current().key == stop.lesson.panel and win.current().step == stop.lesson.step
        assert f"stop {number} of {len(stops)}" in win.tour_label.text() and stop.say in win.tour_label.text()
        assert win.lesson.toPlainText().strip()
        qtbot.keyClick(win, Qt.Key.Key_PageDown)
    assert not win.classroom.tour.active and win.tour_label.text() == ""
    qtbot.keyClick(win, Qt.Key.Key_PageDown)  # after the tour, PgDn steps through panels again


def test_escape_ends_the_tour(light_window, qtbot):
    light_window.classroom.tour.start()
    light_window.classroom.tour.next()
    qtbot.keyClick(light_window, Qt.Key.Key_PageUp)
    assert light_window.classroom.tour.index == 0
    qtbot.keyClick(light_window, Qt.Key.Key_Escape)
    assert not light_window.classroom.tour.active and light_window.tour_label.isHidden()


def test_a_broken_tour_file_is_a_clear_error(tmp_path):
    path = tmp_path / "x.tour.json"
    path.write_text(json.dumps({"format": tour.FORMAT, "version": 1, "stops": [{"lesson": "nope.json"}]}))
    with pytest.raises(LessonError, match=r"'nope\.json', which is not a built-in lesson"):
        tour.load(path)
    path.write_text("[")
    with pytest.raises(LessonError, match="Could not read"):
        tour.load(path)


def test_predict_then_reveal_covers_each_steps_result(light_window, qtbot):
    win = light_window
    panel = win.show_panel("qkv")
    panel.set_step(4)
    win.predict_action.trigger()
    assert win.reveal.covered() == [panel.weights.weight_map]
    cover = win.reveal.covers[0]
    assert cover.isVisible() and cover.geometry() == panel.weights.weight_map.rect()
    panel.weights.weight_map.resize(panel.weights.weight_map.width() + 40, panel.weights.weight_map.height())
    assert cover.geometry() == panel.weights.weight_map.rect()
    qtbot.mouseClick(cover, Qt.MouseButton.LeftButton)
    assert win.reveal.covered() == []
    qtbot.keyClick(win, Qt.Key.Key_PageDown)  # the next step is covered again
    assert win.reveal.covered() == [panel.output.blend.c]
    qtbot.keyClick(win, Qt.Key.Key_R, Qt.KeyboardModifier.ControlModifier)
    assert win.reveal.covered() == []
    win.predict_action.trigger()
    panel.set_step(2)
    assert win.reveal.covered() == []


def test_every_panel_names_a_result_for_each_step():
    for cls in PANELS:
        panel = cls()
        covered = 0
        for step in range(len(cls.steps)):
            panel.set_step(step)
            views = panel.result_views(step)
            assert all(v.isVisibleTo(panel) for v in views), (cls.key, step)
            covered += bool(views)
        assert covered, f"{cls.key} names no result view at any step"
        panel.deleteLater()


def test_every_stop_names_a_step_its_panel_has():
    steps = {cls.key: len(cls.steps) for cls in PANELS}
    _, stops = tour.load(tour.article_tour())
    for number, stop in enumerate(stops, 1):
        assert 0 <= stop.lesson.step < steps[stop.lesson.panel], f"stop {number}"
        assert stop.say, f"stop {number} says nothing"


def test_ctrl_t_starts_the_tour(light_window, qtbot):
    qtbot.keyClick(light_window, Qt.Key.Key_T, Qt.KeyboardModifier.ControlModifier)
    assert light_window.classroom.tour.index == 0
    assert light_window.current().key == light_window.classroom.tour.stops[0].lesson.panel
