"""Lesson files: a panel's state (its step, every control's value, the controls a lecturer hid)
as a small JSON file.

Controls are found by walking the panel's widgets, so a panel needs no code of its own. Each gets
a stable path: its objectName when it has a unique one, otherwise the class names and indices from
the panel down (``QWidget0/QSpinBox2``). Values are set the way a user would set them (a click for
buttons, Enter after typing), so the panel recomputes through its usual signals.

    {"format": "attention-lab lesson", "version": 1, "panel": "qkv", "title": "...", "step": 2,
     "controls": {"QWidget0/QLineEdit0": "the cat sat down", ...}, "hidden": ["QWidget0/QSpinBox2"]}
"""

from __future__ import annotations

import json
import os
import tempfile
from collections import Counter
from dataclasses import dataclass, field
from importlib.resources import files
from pathlib import Path

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QAbstractButton,
    QAbstractItemView,
    QComboBox,
    QDoubleSpinBox,
    QFormLayout,
    QLineEdit,
    QListWidget,
    QMenu,
    QSlider,
    QSpinBox,
    QSplitter,
    QStackedWidget,
    QTabBar,
    QWidget,
)

from app.widgets.sliders import LabelledSlider
from app.widgets.text import TextBox

FORMAT = "attention-lab lesson"
VERSION = 1
KEYS = ("format", "version", "panel", "title", "step", "controls", "hidden")
HIDDEN_PROPERTY = "lesson_hidden"
CONTROL_TYPES = (
    LabelledSlider,
    QLineEdit,
    TextBox,
    QSpinBox,
    QDoubleSpinBox,
    QSlider,
    QComboBox,
    QAbstractButton,
)
SKIPPED = (QAbstractItemView, QTabBar, QMenu)  # tables' editors, the step bar, menus: not controls


class LessonError(ValueError):
    """A lesson file that cannot be opened; the message says why and what to do."""


@dataclass
class Lesson:
    panel: str
    step: int = 0
    controls: dict[str, object] = field(default_factory=dict)
    hidden: list[str] = field(default_factory=list)
    title: str = ""


# --- finding controls ---------------------------------------------------------------------------
def controls(root: QWidget) -> dict[str, QWidget]:
    """Every control under ``root`` by its stable path, in creation order (a control's own parts,
    such as a spin box's line edit or a labelled slider's slider, are not listed separately)."""
    found: dict[str, QWidget] = {}
    names = Counter(w.objectName() for w in root.findChildren(QWidget))

    def walk(widget: QWidget, path: str) -> None:
        counts: dict[str, int] = {}
        for child in _children(widget):
            if not isinstance(child, QWidget) or (isinstance(child, SKIPPED) and not _is_control(child)):
                continue
            # Any stack is a "QStackedWidget", so paths stay the same whichever kind sizes the pages.
            kind = "QStackedWidget" if isinstance(child, QStackedWidget) else type(child).__name__
            index = counts[kind] = counts.get(kind, -1) + 1
            name = child.objectName()
            own = bool(name) and not name.startswith("qt_") and names[name] == 1
            child_path = name if own else f"{path}/{kind}{index}".lstrip("/")
            if _is_control(child):
                found[child_path] = child
            else:
                walk(child, child_path)

    walk(root, "")
    return found


def _children(widget: QWidget) -> list:
    """``widget``'s children in a stable order. Showing a page of a stack raises it, which moves it
    to the end of children(); pages are therefore taken in the stack's own order."""
    children = widget.children()
    if isinstance(widget, (QStackedWidget, QSplitter)):
        pages = [widget.widget(k) for k in range(widget.count())]
        children = pages + [c for c in children if c not in pages]
    return children


def _is_control(widget: QWidget) -> bool:
    if isinstance(widget, QListWidget):  # a list of tick boxes
        return any(_checkable(widget.item(k)) for k in range(widget.count()))
    if isinstance(widget, QAbstractButton):
        return widget.isCheckable()
    return isinstance(widget, CONTROL_TYPES)


def _checkable(item) -> bool:
    return bool(item.flags() & Qt.ItemFlag.ItemIsUserCheckable)


def _ticked(widget: QListWidget) -> list[str]:
    items = [widget.item(k) for k in range(widget.count())]
    return [item.text() for item in items if _checkable(item) and item.checkState() == Qt.CheckState.Checked]


def read_value(widget: QWidget) -> object:
    if isinstance(widget, QListWidget):
        return _ticked(widget)
    if isinstance(widget, (LabelledSlider, QSpinBox, QDoubleSpinBox, QSlider)):
        return widget.value()
    if isinstance(widget, (QLineEdit, TextBox)):
        return widget.text()
    if isinstance(widget, QComboBox):
        return widget.currentText()
    return widget.isChecked()


def check_value(widget: QWidget, value: object) -> str | None:
    """Why ``value`` cannot go into ``widget`` (None when it can)."""
    number = isinstance(value, (int, float)) and not isinstance(value, bool)
    if isinstance(widget, QListWidget):
        texts = {widget.item(k).text() for k in range(widget.count())}
        if not isinstance(value, list) or not all(isinstance(v, str) and v in texts for v in value):
            return f"needs a list of its items, not {value!r}"
    elif isinstance(widget, (QSpinBox, QSlider)):
        if not (number and float(value).is_integer()):
            return f"needs a whole number, not {value!r}"
        if not widget.minimum() <= value <= widget.maximum():
            return f"{value} is outside {widget.minimum()} … {widget.maximum()}"
    elif isinstance(widget, (QDoubleSpinBox, LabelledSlider)):
        if not number:
            return f"needs a number, not {value!r}"
        low, high = _range(widget)
        if not low <= value <= high:
            return f"{value} is outside {low} … {high}"
    elif isinstance(widget, (QLineEdit, TextBox)):
        if not isinstance(value, str):
            return f"needs text, not {value!r}"
    elif isinstance(widget, QComboBox):
        if not isinstance(value, str):
            return f"needs one of its choices as text, not {value!r}"
        if not widget.isEditable() and widget.findText(value) < 0:
            return f"has no choice {value!r}"
    elif not isinstance(value, bool):
        return f"needs true or false, not {value!r}"
    return None


def _range(widget) -> tuple[float, float]:
    if isinstance(widget, LabelledSlider):
        return widget.minimum, widget.maximum
    return widget.minimum(), widget.maximum()


def write_value(widget: QWidget, value: object) -> None:
    """Set ``value`` as a user would, so the panel hears the same signals."""
    if read_value(widget) == value:
        return
    if isinstance(widget, QListWidget):
        for item in (widget.item(k) for k in range(widget.count())):
            if _checkable(item):
                item.setCheckState(Qt.CheckState.Checked if item.text() in value else Qt.CheckState.Unchecked)
    elif isinstance(widget, (LabelledSlider, QSpinBox, QDoubleSpinBox, QSlider)):
        widget.setValue(value)
    elif isinstance(widget, (QLineEdit, TextBox)):
        widget.setText(value)
        widget.editingFinished.emit()
        if isinstance(widget, QLineEdit):
            widget.returnPressed.emit()
    elif isinstance(widget, QComboBox):
        if widget.isEditable():
            widget.setEditText(value)
            widget.lineEdit().editingFinished.emit()
        else:
            widget.setCurrentIndex(widget.findText(value))
    elif widget.isEnabled():
        widget.click()  # a click: button groups and clicked handlers hear it
    else:
        widget.setChecked(value)


# --- reading and applying a panel's state -----------------------------------------------------
def capture(panel, title: str = "") -> Lesson:
    """The lesson that reproduces ``panel`` as it is now."""
    found = controls(panel)
    return Lesson(
        panel=panel.key,
        step=panel.step,
        controls={path: read_value(w) for path, w in found.items()},
        hidden=[path for path, w in found.items() if w.property(HIDDEN_PROPERTY)],
        title=title,
    )


def plan(panel, lesson: Lesson) -> tuple[list[tuple[QWidget, object]], list[str]]:
    """Check ``lesson`` against ``panel`` without changing anything: the (control, value) pairs to
    set, and warnings for what will be skipped. LessonError if it does not fit at all."""
    if lesson.panel != panel.key:
        raise LessonError(f"This lesson is for the panel {lesson.panel!r}, not {panel.key!r}.")
    if not 0 <= lesson.step < len(panel.steps):
        raise LessonError(
            f"Step {lesson.step + 1} does not exist; {panel.title} has {len(panel.steps)} steps."
        )
    found = controls(panel)
    changes, warnings = [], []
    for path, value in lesson.controls.items():
        widget = found.get(path)
        problem = "no such control in this version" if widget is None else check_value(widget, value)
        if problem:
            warnings.append(f"skipped control {path}: {problem}")
        else:
            changes.append((widget, value))
    unknown = [p for p in lesson.hidden if p not in found]
    warnings += [f"cannot hide {p}: no such control in this version" for p in unknown]
    return changes, warnings


def apply(panel, lesson: Lesson) -> list[str]:
    """Put ``panel`` into the lesson's state; returns warnings about what was skipped."""
    changes, warnings = plan(panel, lesson)
    for _ in range(2):  # a second pass for controls that a first change reset (e.g. a preset box)
        for widget, value in changes:
            write_value(widget, value)
        if all(read_value(w) == v for w, v in changes):
            break
    warnings += [
        f"control {controls_path(panel, w)} ended at {read_value(w)!r}"
        for w, v in changes
        if read_value(w) != v
    ]
    set_hidden(panel, lesson.hidden)
    panel.set_step(lesson.step)
    return warnings


def controls_path(panel, widget: QWidget) -> str:
    return next((p for p, w in controls(panel).items() if w is widget), widget.objectName())


# --- hidden controls ----------------------------------------------------------------------------
def set_hidden(panel, paths) -> None:
    """Hide exactly the controls in ``paths`` (and their form labels); show those hidden before."""
    wanted = set(paths)
    for path, widget in controls(panel).items():
        hide = path in wanted
        if bool(widget.property(HIDDEN_PROPERTY)) == hide:
            continue
        widget.setProperty(HIDDEN_PROPERTY, hide)
        for part in (widget, form_label(panel, widget)):
            if part is not None:
                part.setVisible(not hide)


def form_label(panel, widget: QWidget) -> QWidget | None:
    for form in panel.findChildren(QFormLayout):
        label = form.labelForField(widget)
        if label is not None:
            return label
    return None


def control_label(panel, path: str, widget: QWidget) -> str:
    """A readable name for a control: its form label, slider name or button text, else its path."""
    label = form_label(panel, widget)
    if label is not None and hasattr(label, "text") and label.text():
        return label.text()
    if isinstance(widget, LabelledSlider):
        return widget.name.text()
    if isinstance(widget, QAbstractButton) and widget.text():
        return widget.text()
    if isinstance(widget, QLineEdit) and widget.placeholderText():
        return widget.placeholderText()
    return path


# --- files ---------------------------------------------------------------------------------------
def to_json(lesson: Lesson) -> str:
    data = {"format": FORMAT, "version": VERSION, "panel": lesson.panel, "title": lesson.title}
    data |= {"step": lesson.step, "controls": lesson.controls, "hidden": lesson.hidden}
    return json.dumps(data, indent=2, ensure_ascii=False) + "\n"


def parse(text: str, source: str = "the lesson") -> tuple[Lesson, list[str]]:
    """A lesson and warnings (unknown keys), or LessonError saying what is wrong with the file."""
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise LessonError(
            f"{source} is not a readable lesson file (broken JSON: {exc.msg}, line {exc.lineno})."
        ) from None
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        raise LessonError(f"{source} is not an Attention Lab lesson file.")
    version = data.get("version")
    if version != VERSION:
        raise LessonError(
            f"{source} has lesson format version {version!r}; this Attention Lab reads version {VERSION}. "
            "Open it in the version that made it and save it again, or make the lesson anew."
        )
    panel, step, values, hidden = (
        data.get("panel"),
        data.get("step", 0),
        data.get("controls", {}),
        data.get("hidden", []),
    )
    if not isinstance(panel, str) or not isinstance(step, int) or isinstance(step, bool):
        raise LessonError(f"{source} is damaged: its panel or step is missing or not valid.")
    if not isinstance(values, dict) or not all(map(_simple, values.values())):
        raise LessonError(f"{source} is damaged: its controls are not a list of simple values.")
    if not isinstance(hidden, list) or not all(isinstance(p, str) for p in hidden):
        raise LessonError(f"{source} is damaged: its hidden controls are not a list of names.")
    warnings = [f"ignored unknown key {key!r}" for key in data if key not in KEYS]
    title = data.get("title") if isinstance(data.get("title"), str) else ""
    return Lesson(panel=panel, step=step, controls=values, hidden=hidden, title=title), warnings


def _simple(value) -> bool:
    """A control's value: text, a number, true/false, or a list of texts (ticked items)."""
    if isinstance(value, list):
        return all(isinstance(v, str) for v in value)
    return isinstance(value, (str, int, float, bool))


def load(path: str | Path) -> tuple[Lesson, list[str]]:
    try:
        text = Path(path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise LessonError(f"Could not read {path}: {exc}") from None
    return parse(text, Path(path).name)


def save(path: str | Path, lesson: Lesson) -> None:
    """Write atomically: a temporary file in the same folder, then a rename over ``path``, so a
    crash never leaves a half-written lesson."""
    path = Path(path)
    handle, temporary = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(handle, "w", encoding="utf-8") as out:
            out.write(to_json(lesson))
            out.flush()
            os.fsync(out.fileno())
        os.chmod(temporary, path.stat().st_mode if path.exists() else 0o644)  # not the temp file's 0600
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise


def builtin_folder() -> Path:
    return Path(str(files("resources").joinpath("lessons", "presets")))


def builtin_lessons() -> dict[str, Path]:
    """The lessons shipped with the app, {file name: path}, sorted by name (tours not included)."""
    paths = sorted(builtin_folder().glob("*.json"))
    return {p.name: p for p in paths if not p.name.endswith(".tour.json")}
