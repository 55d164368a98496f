"""Lesson files: every panel's state survives save → change everything → open; bad files change nothing."""

import importlib.util
import json
import os
from pathlib import Path

import numpy as np
import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QAbstractButton,
    QComboBox,
    QDialog,
    QDoubleSpinBox,
    QLineEdit,
    QListWidget,
    QMenu,
    QRadioButton,
    QSlider,
    QSpinBox,
)

from app import lesson_files
from app.lesson_files import LessonError
from app.panels import PANELS
from app.widgets.sliders import LabelledSlider
from resources import lesson_text
from tests.app.conftest import idle
from tests.waits import patience_ms

ROOT = Path(__file__).resolve().parents[2]
# Panels built around their bundled model: without the 'models' extra it is not there, and the
# controls that show it are not built.
NEEDS_MODELS = {"model"}
HAS_MODELS = importlib.util.find_spec("torch") is not None


def open_and_wait(window, qtbot, path) -> list[str]:
    """Open a lesson and wait until the panel has settled; the warnings."""
    got = []
    window.classroom.open_path(path, got.append)
    qtbot.waitUntil(lambda: bool(got), timeout=patience_ms(60))
    return got[0]


def settled(panel):
    idle()
    return panel


def change_everything(panel, rng) -> None:
    """Move every control to another valid value (and another step)."""
    for widget in lesson_files.controls(panel).values():
        if isinstance(widget, (QSpinBox, QDoubleSpinBox, QSlider)):
            value = widget.value()
            widget.setValue(value + widget.singleStep() if value < widget.maximum() else widget.minimum())
        elif isinstance(widget, LabelledSlider):
            widget.setValue(rng.uniform(widget.minimum, widget.maximum))
        elif isinstance(widget, QComboBox) and widget.count():
            widget.setCurrentIndex((widget.currentIndex() + 1) % widget.count())
        elif isinstance(widget, QLineEdit):
            widget.setText(widget.text() + " 4")
        elif isinstance(widget, QListWidget):
            item = widget.item(0)
            lesson_files.write_value(widget, [] if lesson_files.read_value(widget) else [item.text()])
        elif isinstance(widget, QRadioButton):
            if not widget.isChecked():
                widget.click()
        elif isinstance(widget, QAbstractButton):
            widget.click()
    panel.set_step((panel.step + 1) % len(panel.steps))
    idle()


@pytest.mark.parametrize(
    "cls",
    [pytest.param(c, marks=pytest.mark.models) if c.key in NEEDS_MODELS else c for c in PANELS],
    ids=lambda c: c.key,
)
def test_round_trip_restores_every_control(window, qtbot, cls, tmp_path):
    panel = settled(window.show_panel(cls.key))
    rng = np.random.default_rng(0)
    change_everything(panel, rng)
    saved = lesson_files.capture(panel, "mine")
    assert saved.controls, f"{cls.key} has no controls to save"
    path = tmp_path / "lesson.json"
    window.classroom.save_path(path, "mine")
    change_everything(panel, rng)
    assert lesson_files.capture(panel) != saved
    window.show_panel(PANELS[-1].key if cls is PANELS[0] else PANELS[0].key)
    assert open_and_wait(window, qtbot, path) == []
    assert window.current() is panel
    again = lesson_files.capture(panel, "mine")
    assert (again.step, again.controls, again.hidden) == (saved.step, saved.controls, saved.hidden)


def test_round_trip_restores_the_computed_state(window, tmp_path):
    panel = window.show_panel("qkv")
    panel.tokens_edit.setText("a rose is a rose")
    panel.seed_spin.setValue(5)
    panel.set_step(4)
    weights = panel.trace.weights.copy()
    window.classroom.save_path(tmp_path / "q.json")
    panel.reset()
    panel.set_step(0)
    window.classroom.open_path(tmp_path / "q.json")
    np.testing.assert_array_equal(panel.trace.weights, weights)
    assert panel.step == 4 and panel.example.tokens == ["a", "rose", "is", "a", "rose"]


def test_hidden_controls_are_saved_and_restored(window, tmp_path):
    panel = window.show_panel("qkv")
    found = lesson_files.controls(panel)
    seed_path = next(p for p, w in found.items() if w is panel.seed_spin)
    label = lesson_files.form_label(panel, panel.seed_spin)
    lesson_files.set_hidden(panel, [seed_path])
    assert not panel.seed_spin.isVisible() and not label.isVisible()
    window.classroom.save_path(tmp_path / "trimmed.json")
    assert json.loads((tmp_path / "trimmed.json").read_text())["hidden"] == [seed_path]
    lesson_files.set_hidden(panel, [])
    assert panel.seed_spin.isVisible() and label.isVisible()
    window.classroom.open_path(tmp_path / "trimmed.json")
    assert not panel.seed_spin.isVisible() and not label.isVisible()


def test_the_hide_dialog_hides_the_unticked_controls(window, monkeypatch):
    panel = window.show_panel("qkv")

    def untick_tokens(dialog):
        items = dialog.findChild(QListWidget)
        assert items.item(0).text() == "Tokens"
        items.item(0).setCheckState(Qt.CheckState.Unchecked)
        return QDialog.DialogCode.Accepted

    monkeypatch.setattr(QDialog, "exec", untick_tokens)
    window.classroom.hide_controls_dialog()
    assert panel.tokens_edit.isHidden() and not panel.seed_spin.isHidden()
    assert lesson_files.capture(panel).hidden == [next(iter(lesson_files.controls(panel)))]


def good_lesson(window, tmp_path) -> dict:
    window.show_panel("qkv")
    window.classroom.save_path(tmp_path / "good.json")
    return json.loads((tmp_path / "good.json").read_text())


BAD = {
    "truncated": lambda text, data: text[: len(text) // 2],
    "empty": lambda text, data: "",
    "not a lesson": lambda text, data: json.dumps({"hello": 1}),
    "old version": lambda text, data: json.dumps(data | {"version": 0}),
    "newer version": lambda text, data: json.dumps(data | {"version": 2}),
    "no such panel": lambda text, data: json.dumps(data | {"panel": "nope"}),
    "bad step": lambda text, data: json.dumps(data | {"step": 99}),
    "damaged controls": lambda text, data: json.dumps(data | {"controls": [1, 2]}),
    "damaged hidden": lambda text, data: json.dumps(data | {"hidden": "all"}),
}
MESSAGES = {
    "truncated": "broken JSON",
    "empty": "broken JSON",
    "not a lesson": "not an Attention Lab lesson",
    "old version": "version 0",
    "newer version": "version 2",
    "no such panel": "'nope'",
    "bad step": "Step 100 does not exist",
    "damaged controls": "damaged",
    "damaged hidden": "damaged",
}


def test_bad_files_get_a_clear_message_and_change_nothing(window, tmp_path):
    data = good_lesson(window, tmp_path)
    text = (tmp_path / "good.json").read_text()
    panel = window.show_panel("qkv")
    panel.seed_spin.setValue(9)
    window.show_panel("scale")
    before = {key: lesson_files.capture(p) for key, p in window.panels.items()}
    for kind, damage in BAD.items():
        path = tmp_path / f"{kind}.json"
        path.write_text(damage(text, data))
        with pytest.raises(LessonError, match=MESSAGES[kind]):
            window.classroom.open_path(path)
        assert window.current().key == "scale", kind
        assert {key: lesson_files.capture(p) for key, p in window.panels.items()} == before, kind


def test_the_menu_shows_the_error_instead_of_raising(window, tmp_path, monkeypatch):
    shown = []
    monkeypatch.setattr("app.classroom.QMessageBox.warning", lambda *args: shown.append(args[2]))
    (tmp_path / "bad.json").write_text("{")
    window.classroom.open_lesson(tmp_path / "bad.json")
    assert shown and "broken JSON" in shown[0]


def test_unknown_keys_and_controls_are_skipped_with_warnings(window, qtbot, tmp_path):
    data = good_lesson(window, tmp_path)
    data["comment"] = "from a later version"
    data["controls"]["NoSuchWidget0"] = 3
    first = next(iter(data["controls"]))
    data["controls"][first] = 12.5  # the tokens box wants text
    (tmp_path / "odd.json").write_text(json.dumps(data))
    warnings = open_and_wait(window, qtbot, tmp_path / "odd.json")
    assert any("'comment'" in w for w in warnings)
    assert any("NoSuchWidget0" in w for w in warnings)
    assert any(first in w and "needs text" in w for w in warnings)


def test_saving_is_atomic(window, tmp_path, monkeypatch):
    good_lesson(window, tmp_path)
    path = tmp_path / "good.json"
    before = path.read_text()
    window.current().seed_spin.setValue(3)

    def crash(*_args):
        raise OSError("disk full")

    monkeypatch.setattr(os, "replace", crash)
    with pytest.raises(OSError, match="disk full"):
        window.classroom.save_path(path)
    assert path.read_text() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["good.json", "settings"]


def test_recent_lessons_are_remembered(window, tmp_path):
    for name in ("a.json", "b.json", "a.json"):
        window.classroom.save_path(tmp_path / name)
    recent = window.classroom.recent()
    assert [Path(p).name for p in recent[:2]] == ["a.json", "b.json"]
    submenu = QMenu()
    window.classroom.fill_recent_menu(submenu)
    assert [a.text() for a in submenu.actions()][:2] == ["a.json", "b.json"]


def test_builtin_lessons_cover_every_panel_and_open_cleanly(window, qtbot):
    builtin = lesson_files.builtin_lessons()
    lessons = {name: lesson_files.load(path) for name, path in builtin.items()}
    assert {lesson.panel for lesson, _ in lessons.values()} >= {cls.key for cls in PANELS}
    known = window.keys()
    for name, path in builtin.items():
        lesson, warnings = lessons[name]
        assert lesson.title and warnings == []
        if lesson.panel in known and (HAS_MODELS or lesson.panel not in NEEDS_MODELS):
            assert open_and_wait(window, qtbot, path) == [], name


# Every concept of the two articles (see the seeds' README) and words that show a lesson teaches it.
CONCEPTS = {
    "static embeddings": ["embedding"],
    "queries, keys, values": ["query", "key", "value"],
    "matrix product as dot products": ["dot product"],
    "scaling by √d_k": ["√d"],
    "softmax saturation": ["saturat"],
    "dot products grow like √d_k": ["grow"],
    "weighted sum of values": ["weighted", "blend"],
    "NumPy implementation": ["numpy"],
    "scaled dot-product attention diagram": ["diagram"],
    "self-attention": ["self-attention"],
    "causal attention": ["causal"],
    "cross-attention": ["cross-attention"],
    "multi-head attention": ["multi-head"],
    "what heads learn": ["heads learn"],
    "a real model: MiniLM, 6 layers × 12 heads": ["minilm"],
    "it → trophy": ["trophy"],
    "sinusoidal encoding": ["sinusoid"],
    "learned position table": ["learned table"],
    "RoPE": ["rope"],
    "interpolation and YaRN": ["interpolation", "yarn"],
    "O(n²) cost": ["n²"],
    "FlashAttention": ["flashattention"],
    "sliding-window attention": ["sliding"],
    "sparse attention": ["sparse"],
    "linear attention (kernelised softmax)": ["linear attention", "feature"],
    "attention as soft retrieval / database lookup": ["lookup", "retriev"],
    "temperature": ["temperature"],
    "peak and entropy per token": ["peak", "entropy"],
    "per-head statistics and agreement": ["agreement"],
    "additive mask and the future-leak check": ["additive", "leak"],
    "FLOPs and score memory up to 65,536 tokens": ["flop", "65,536"],
    "classical Hopfield network": ["hopfield"],
    "capacity 0.14·N vs exponential": ["0.14", "exponential"],
    "modern Hopfield retrieval": ["modern"],
}


def test_lesson_texts_cover_every_concept_of_both_articles():
    folder = ROOT / "resources" / "lessons"
    text = " ".join(lesson_text(p.name) for p in folder.glob("*.md")).lower()
    missing = [c for c, words in CONCEPTS.items() if not all(w.lower() in text for w in words)]
    assert missing == []
