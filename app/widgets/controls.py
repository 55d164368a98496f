"""Small helpers every panel uses to build its controls and tie them to a state.

``bind(control, live, field)`` is the one link between a control and a state field: the control
writes the field when the user changes it (``live.apply(field=value)``), and every accepted change
of the state writes the field back into the control with its signals blocked (no recompute).
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Iterable

from PySide6.QtCore import QEvent, QObject, QRect, QSize, Qt, Signal
from PySide6.QtGui import QTextOption
from PySide6.QtWidgets import (
    QAbstractButton,
    QAbstractSpinBox,
    QApplication,
    QComboBox,
    QDoubleSpinBox,
    QFormLayout,
    QGridLayout,
    QLabel,
    QLayout,
    QLineEdit,
    QListWidget,
    QPlainTextEdit,
    QPushButton,
    QScrollArea,
    QSizePolicy,
    QSlider,
    QSpinBox,
    QStyle,
    QStyleOptionButton,
    QVBoxLayout,
    QWidget,
)

from app.widgets.sliders import LabelledSlider

BREAK_CHARS = 30  # a wrapping label may break a word after this many characters
LONG_WORD = re.compile(rf"[^\s\u200b]{{{BREAK_CHARS + 1},}}")
ZERO_WIDTH_SPACE = "\u200b"
SIDE_COLUMN = "side_column"  # property of the control columns that presenting mode hides
FIELD_MARGIN = 16  # pixels a text field needs beside its text (frame and margins)
SIDE_COLUMN_CHARS = 48  # a control column's width for wrapping notes, in average characters
FIELD_COLUMN_CHARS = 64  # ... and the most it widens for the text typed into its fields


def breakable(text: str) -> str:
    """``text`` with a zero-width space after every BREAK_CHARS characters of a longer word, so a
    wrapping label can break it (a pasted word thousands of characters long would otherwise widen
    the label, and the window with it). HTML tags and entities are left whole."""
    pieces = re.split(r"(<[^>]*>|&#?\w+;)", text)
    for k in range(0, len(pieces), 2):  # the text between tags and entities
        pieces[k] = LONG_WORD.sub(lambda m: ZERO_WIDTH_SPACE.join(_chunks(m[0])), pieces[k])
    return "".join(pieces)


def _chunks(word: str) -> list[str]:
    return [word[k : k + BREAK_CHARS] for k in range(0, len(word), BREAK_CHARS)]


class OwnHeight:
    """For widgets whose minimumSizeHint says the least height they need at their current width
    (updated as the width changes): they answer no to height-for-width. A layout holding an item
    with height for width takes that height as the item's least, squeezing it and its neighbours
    below their least sizes (a wrapping label inside makes any widget answer yes)."""

    def hasHeightForWidth(self) -> bool:
        return False


class Note(OwnHeight, QLabel):
    """A wrapping label whose text may hold what a person typed: long words break anywhere."""

    room: tuple[str, ...] = ()  # texts whose height the label keeps (keep_room_for)
    measured: tuple = ((), 0)  # (width, text, font) and the height the text needs there

    def setText(self, text: str) -> None:
        super().setText(breakable(text))

    def keep_room_for(self, texts: Iterable[str]) -> None:
        """Be as tall as the tallest of ``texts`` needs, whichever is shown: switching among them
        then moves nothing below the label (a move redraws every plot there)."""
        self.room = tuple(breakable(text) for text in texts)
        self.measured = ((), 0)
        self.updateGeometry()

    def minimumSizeHint(self) -> QSize:
        """At least as tall as the text needs at the current width, so a panel short of height
        scrolls (the window's panel area) rather than cutting the note's last lines."""
        hint = super().minimumSizeHint()
        if self.width() <= 0 or not self.wordWrap():
            return hint
        key = (self.width(), self.text(), self.font().key())  # a layout pass asks several times
        if self.measured[0] != key:
            self.measured = (key, self.heightForWidth(self.width()))
        return QSize(hint.width(), max(hint.height(), self.measured[1]))

    def sizeHint(self) -> QSize:
        """QLabel's width; the height the text needs at the current width (QLabel's own guess is
        for a narrower width, and a layout would give the note that much)."""
        hint = super().sizeHint()
        if self.width() <= 0 or not self.wordWrap():
            return hint
        return QSize(hint.width(), self.minimumSizeHint().height())

    def resizeEvent(self, event) -> None:
        super().resizeEvent(event)
        if event.size().width() != event.oldSize().width():
            self.updateGeometry()  # the least height follows the width

    def heightForWidth(self, width: int) -> int:
        own = super().heightForWidth(width)
        if not self.room:
            return own
        margins = self.contentsMargins()
        inner = QRect(0, 0, max(width - margins.left() - margins.right(), 1), 1_000_000)
        wrapped = Qt.TextFlag.TextWordWrap
        tallest = max(self.fontMetrics().boundingRect(inner, wrapped, text).height() for text in self.room)
        return max(own, tallest + margins.top() + margins.bottom())


class TextBox(OwnHeight, QPlainTextEdit):
    """A one-paragraph text field that wraps its text onto as many lines as the width needs (up
    to MAX_LINES, then it scrolls), for long typed input such as a sequence of numbers. It reads
    like a QLineEdit: ``text()``, ``setText()``, ``textChanged``; Enter ends the edit
    (``editingFinished``) instead of starting a line."""

    MAX_LINES = 4
    editingFinished = Signal()

    def __init__(self, text: str = "", parent=None):
        super().__init__(parent)
        self.setTabChangesFocus(True)
        self.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.setWordWrapMode(QTextOption.WrapMode.WrapAtWordBoundaryOrAnywhere)
        self.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Fixed)
        self.setVerticalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.setPlainText(text)
        self.textChanged.connect(self._show_bar)  # a line more or less

    def text(self) -> str:
        return self.toPlainText()

    def setText(self, text: str) -> None:
        self.setPlainText(text)

    def keyPressEvent(self, event) -> None:
        if event.key() in (Qt.Key.Key_Return, Qt.Key.Key_Enter):
            self.editingFinished.emit()
            return
        super().keyPressEvent(event)

    def focusOutEvent(self, event) -> None:
        super().focusOutEvent(event)
        self.editingFinished.emit()

    def insertFromMimeData(self, source) -> None:
        """Pasted lines join into one paragraph."""
        self.insertPlainText(" ".join(source.text().split()))

    def _laid_out(self) -> tuple[int, float]:
        """The lines the text takes at the current width, and their height in pixels."""
        layout, block = self.document().documentLayout(), self.document().firstBlock()
        lines, height = 0, 0.0
        while block.isValid():
            lines += block.layout().lineCount()
            height += layout.blockBoundingRect(block).height()
            block = block.next()
        return lines, height

    def minimumSizeHint(self) -> QSize:
        """As tall as the text needs at the current width (as laid out), up to MAX_LINES lines;
        a scroll bar shows only beyond them (one that came and went would change the width)."""
        frame = 2 * self.frameWidth() + 2 * math.ceil(self.document().documentMargin())
        lines, height = self._laid_out()
        height = max(height, self.fontMetrics().lineSpacing())
        if lines > self.MAX_LINES:
            height *= self.MAX_LINES / lines
        return QSize(self.fontMetrics().averageCharWidth() * 8 + frame, math.ceil(height) + frame)

    def _show_bar(self) -> None:
        beyond = self._laid_out()[0] > self.MAX_LINES
        policy = Qt.ScrollBarPolicy.ScrollBarAsNeeded if beyond else Qt.ScrollBarPolicy.ScrollBarAlwaysOff
        if self.verticalScrollBarPolicy() != policy:
            self.setVerticalScrollBarPolicy(policy)
        self.updateGeometry()

    def sizeHint(self) -> QSize:
        return self.minimumSizeHint()

    def resizeEvent(self, event) -> None:
        super().resizeEvent(event)
        if event.size().width() != event.oldSize().width():
            self._show_bar()  # the least height follows the width


def note(text: str = "", rich: bool = False) -> QLabel:
    """A wrapping, selectable text label for the explanations beside a view (HTML if ``rich``);
    words longer than BREAK_CHARS characters break anywhere."""
    label = Note()
    label.setText(text)
    label.setWordWrap(True)
    if rich:
        label.setTextFormat(Qt.TextFormat.RichText)
    label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
    return label


class NotesArea(QScrollArea):
    """A scroll area that asks for the least width of what it holds (a wrapping note's longest
    word), so a column of notes is never squeezed into cutting them at its right edge."""

    def minimumSizeHint(self) -> QSize:
        hint = super().minimumSizeHint()
        inner = self.widget()
        if inner is None:
            return hint
        bar = self.style().pixelMetric(QStyle.PixelMetric.PM_ScrollBarExtent)
        return QSize(
            max(hint.width(), inner.minimumSizeHint().width() + bar + 2 * self.frameWidth()), hint.height()
        )

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if watched is self.widget() and event.type() == QEvent.Type.LayoutRequest:
            self.updateGeometry()  # new text: its least width may have changed
        return super().eventFilter(watched, event)


def scrolling(*labels: QWidget) -> QScrollArea:
    """``labels`` one under another in an area that scrolls up and down, never sideways: notes
    that need more height than a small screen has (large text) scroll instead of growing the
    window past the screen."""
    inner = QWidget()
    column = QVBoxLayout(inner)
    column.setContentsMargins(0, 0, 0, 0)
    for label in labels:
        column.addWidget(label)
    column.addStretch(1)
    area = NotesArea()
    area.setWidget(inner)
    area.setWidgetResizable(True)
    area.setFrameShape(QScrollArea.Shape.NoFrame)
    area.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
    return area


def spin(value: int, minimum: int, maximum: int, step: int = 1, tracking: bool = False) -> QSpinBox:
    """A whole-number box with thousands separators. Without ``tracking`` it reports once the
    typing is done, not at every digit."""
    box = QSpinBox()
    box.setRange(minimum, maximum)
    box.setSingleStep(step)
    box.setGroupSeparatorShown(True)
    box.setKeyboardTracking(tracking)
    box.setValue(value)
    return box


def float_spin(
    value: float, minimum: float, maximum: float, decimals: int = 1, step: float = 1.0
) -> QDoubleSpinBox:
    """A number box; give it a wide range when the panel should explain why a value is bad."""
    box = QDoubleSpinBox()
    box.setRange(minimum, maximum)
    box.setDecimals(decimals)
    box.setSingleStep(step)
    box.setKeyboardTracking(False)
    box.setValue(value)
    return box


def value_of(control: QWidget):
    """What ``control`` shows: a number, text, a combo box's item data (its text when it has
    none) or a check state."""
    if isinstance(control, (LabelledSlider, QSpinBox, QDoubleSpinBox, QSlider)):
        return control.value()
    if isinstance(control, (QLineEdit, TextBox)):
        return control.text()
    if isinstance(control, QComboBox):
        data = control.currentData()
        return control.currentText() if data is None else data
    if isinstance(control, QAbstractButton):
        return control.isChecked()
    raise TypeError(f"{type(control).__name__} is not a control that holds a value")


def set_quietly(control: QWidget, value) -> None:
    """Show ``value`` in ``control`` without emitting its change signal (no recompute); a
    control that already shows it is left alone (a text box keeps its cursor)."""
    if value_of(control) == value:
        return
    control.blockSignals(True)
    try:
        if isinstance(control, (QLineEdit, TextBox)):
            control.setText(value)
        elif isinstance(control, QComboBox):
            index = control.findData(value)
            control.setCurrentIndex(index if index >= 0 else control.findText(str(value)))
        elif isinstance(control, QAbstractButton):
            control.setChecked(bool(value))
        else:
            control.setValue(value)
    finally:
        control.blockSignals(False)


def changed_signal(control: QWidget):
    """The signal a control emits when the user changes its value."""
    if isinstance(control, (QLineEdit, TextBox)):
        return control.textChanged
    if isinstance(control, QComboBox):
        return control.currentIndexChanged
    if isinstance(control, QAbstractButton):
        return control.toggled
    return control.valueChanged


def bind(control: QWidget, live, field: str, convert: Callable = lambda v: v) -> QWidget:
    """Tie ``control`` to ``field`` of ``live.state`` both ways; ``convert`` turns what the control
    shows into the field's value (e.g. ``int`` for a slider's float). Returns ``control``."""
    changed_signal(control).connect(lambda *_: live.apply(**{field: convert(value_of(control))}))
    live.changed.connect(lambda: set_quietly(control, getattr(live.state, field)))
    return control


def text_width(field: QLineEdit) -> int:
    """The width ``field`` needs to show its text whole at its font."""
    return field.fontMetrics().horizontalAdvance(field.text()) + FIELD_MARGIN


def alone_on_its_line(field: QWidget) -> bool:
    """Whether ``field`` has a line of its own in its form (no label beside it)."""
    parent = field.parentWidget()
    for form in parent.findChildren(QFormLayout) if parent is not None else ():
        row, role = form.getWidgetPosition(field)
        if row >= 0:
            wraps = form.rowWrapPolicy() == QFormLayout.RowWrapPolicy.WrapAllRows
            return wraps or role == QFormLayout.ItemRole.SpanningRole
    return False


class ColumnWidth(QObject):
    """Keeps a control column as wide as its content at the current text size: wide enough for
    the text typed into its fields (up to FIELD_COLUMN_CHARS average characters), else at most
    SIDE_COLUMN_CHARS unless a control needs more (wrapping notes would otherwise ask for a line
    of 80 characters). A filter, not a subclass: the column stays a plain QWidget, whose type
    names the controls' paths in saved lessons."""

    def __init__(self, column: QWidget):
        super().__init__(column)
        self.column = column
        self.fields: set[int] = set()  # the text fields whose changes refit the column

    def eventFilter(self, column: QWidget, event: QEvent) -> bool:
        # Shown too: a column that was hidden when the text size changed measured its controls
        # before they had the new font.
        if event.type() in (
            QEvent.Type.FontChange,
            QEvent.Type.LayoutRequest,
            QEvent.Type.Polish,
            QEvent.Type.Show,
        ):
            self.fit()
        return False

    def fit(self) -> None:
        column, layout = self.column, self.column.layout()
        least, hint = layout.minimumSize().width(), layout.sizeHint().width()
        char = column.fontMetrics().averageCharWidth()
        widest = max(least, SIDE_COLUMN_CHARS * char)
        wanted = least
        for field in column.findChildren(QLineEdit):
            if isinstance(field.parent(), (QAbstractSpinBox, QComboBox)):
                continue  # a spin box's or combo box's own editor
            if id(field) not in self.fields:
                self.fields.add(id(field))
                field.textChanged.connect(self.fit)
            text = text_width(field)
            if alone_on_its_line(field):  # a line of its own: the text and the column's margins
                margins = layout.contentsMargins()
                wanted = max(wanted, text + margins.left() + margins.right())
            else:  # beside its label: what the row asks now, widened to the text
                wanted = max(wanted, hint + text - field.sizeHint().width())
        width = min(wanted, max(widest, FIELD_COLUMN_CHARS * char))
        widest = max(widest, width)
        if (column.minimumWidth(), column.maximumWidth()) != (width, widest):
            column.setMinimumWidth(width)
            column.setMaximumWidth(widest)


class WholeItems(QObject):
    """Keeps a short list exactly as large as its items at the current text size: each item
    whole, no scroll bars (the window makes room for it instead)."""

    def __init__(self, view: QListWidget):
        super().__init__(view)
        self.view = view
        view.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        view.setVerticalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        view.installEventFilter(self)
        self.fit()

    def eventFilter(self, view: QObject, event: QEvent) -> bool:
        if event.type() in (QEvent.Type.FontChange, QEvent.Type.Polish):
            self.fit()
        return False

    def fit(self) -> None:
        view, frame = self.view, 2 * self.view.frameWidth()
        view.setFixedHeight(sum(view.sizeHintForRow(k) for k in range(view.count())) + frame)
        view.setMinimumWidth(view.sizeHintForColumn(0) + frame)


class ComboSizes(QObject):
    """A filter for combo boxes: Qt keeps a combo box's least size from the font it first had, so
    with larger text its current item would be cut; a new font makes it measure again."""

    def eventFilter(self, box: QObject, event: QEvent) -> bool:
        if event.type() == QEvent.Type.FontChange:
            QApplication.sendEvent(box, QEvent(QEvent.Type.StyleChange))  # clears both size caches
        return False


class WrappingButton(QPushButton):
    """A push button whose text wraps onto more lines when the button is narrower than it, so a
    control column can be narrower than its longest button's text (large text on a small screen).
    It asks for its text on one line and makes do with its longest word."""

    def __init__(self, text: str = "", parent=None):
        super().__init__(text, parent)
        self.whole = text
        policy = QSizePolicy(QSizePolicy.Policy.Preferred, QSizePolicy.Policy.Fixed)  # may narrow
        policy.setHeightForWidth(True)
        self.setSizePolicy(policy)

    def text(self) -> str:
        return self.whole

    def setText(self, text: str) -> None:
        self.whole = text
        self._wrap(self.width())
        self.updateGeometry()

    def sizeHint(self) -> QSize:
        return self._size(self.whole)

    def minimumSizeHint(self) -> QSize:
        longest = max(self.whole.split(), key=self.fontMetrics().horizontalAdvance, default="")
        return self._size(longest).expandedTo(QSize(0, self.heightForWidth(self.width())))

    def hasHeightForWidth(self) -> bool:
        return True

    def heightForWidth(self, width: int) -> int:
        return self._size(self._lines(width)).height()

    def resizeEvent(self, event) -> None:
        self._wrap(event.size().width())
        super().resizeEvent(event)

    def _wrap(self, width: int) -> None:
        lines = self._lines(width)
        if QPushButton.text(self) != lines:
            QPushButton.setText(self, lines)

    def _lines(self, width: int) -> str:
        """The text broken at spaces into lines that fit a button ``width`` pixels wide."""
        room = width - self._size("").width()
        metrics, lines = self.fontMetrics(), []
        for word in self.whole.split():
            joined = f"{lines[-1]} {word}" if lines else word
            if lines and metrics.horizontalAdvance(joined) <= room:
                lines[-1] = joined
            else:
                lines.append(word)
        return "\n".join(lines)

    def _size(self, text: str) -> QSize:
        """The button's size for ``text`` (lines separated by newlines), as the style draws it."""
        option = QStyleOptionButton()
        self.initStyleOption(option)
        metrics = self.fontMetrics()
        contents = metrics.size(Qt.TextFlag.TextShowMnemonic, text) if text else QSize(0, metrics.height())
        return self.style().sizeFromContents(QStyle.ContentsType.CT_PushButton, option, contents, self)


Cell = tuple[QWidget, int, int, int]  # a widget, its row, its column and how many columns it spans


class ReflowGrid(QGridLayout):
    """A grid of controls in two arrangements of the same widgets: ``wide`` (few rows) where the
    room allows, else ``narrow`` (more rows, fewer columns), so larger text on a small screen adds
    rows rather than widening the panel. Its least width is the narrow arrangement's. ``stretch``
    names the column that takes the spare room in each arrangement. Widgets are added in the wide
    arrangement's order, which names their paths in saved lessons."""

    def __init__(self, wide: Iterable[Cell], narrow: Iterable[Cell], stretch: tuple[int, int] = (1, 1)):
        super().__init__()
        self.arrangements = (tuple(wide), tuple(narrow))
        self.stretch = stretch
        self.shown = -1  # index into arrangements of the one in place
        self.measured: tuple = ()  # what the least sizes below were measured for
        self.least = (QSize(), QSize())  # each arrangement's least size
        self.wide_hint = QSize()
        self._arrange(0)

    def _arrange(self, k: int) -> None:
        if k == self.shown:
            return
        for widget, *_ in self.arrangements[self.shown] if self.shown >= 0 else ():
            self.removeWidget(widget)
        for column in range(self.columnCount()):
            self.setColumnStretch(column, 0)
        for widget, row, column, span in self.arrangements[k]:
            self.addWidget(widget, row, column, 1, span)
        self.setColumnStretch(self.stretch[k], 1)
        self.shown = k

    def _measure(self) -> None:
        """Both arrangements' least sizes, measured again when a widget's least size changed
        (a new text size)."""
        widgets = [cell[0] for cell in self.arrangements[0]]
        key = tuple((w.minimumSizeHint(), w.minimumSize(), w.isHidden()) for w in widgets)
        if key == self.measured:
            return
        shown, least = self.shown, {}
        for k in (1, 0):  # the wide arrangement last: its size hint is the one kept
            self._arrange(k)
            least[k] = super().minimumSize()
        self.wide_hint = super().sizeHint()
        self.least = (least[0], least[1])
        self._arrange(shown)
        self.measured = key

    def minimumSize(self) -> QSize:
        self._measure()
        return QSize(self.least[1].width(), super().minimumSize().height())

    def sizeHint(self) -> QSize:
        self._measure()
        return QSize(self.wide_hint.width(), super().sizeHint().height())

    def setGeometry(self, rect: QRect) -> None:
        self._measure()
        self._arrange(0 if rect.width() >= self.least[0].width() else 1)
        super().setGeometry(rect)


class WholeText(QObject):
    """Keeps a text field at least as wide as its text, up to FIELD_COLUMN_CHARS average
    characters, at the current text size: a prompt a lesson talks about shows whole, and the
    window gives it room before the lesson pane; a longer text scrolls inside the field."""

    def __init__(self, field: QLineEdit):
        super().__init__(field)
        self.field = field
        field.installEventFilter(self)
        field.textChanged.connect(self.fit)
        self.fit()

    def eventFilter(self, field: QObject, event: QEvent) -> bool:
        if event.type() == QEvent.Type.FontChange:
            self.fit()
        return False

    def fit(self) -> None:
        most = FIELD_COLUMN_CHARS * self.field.fontMetrics().averageCharWidth()
        self.field.setMinimumWidth(min(text_width(self.field), most))


def side_column(layout: QLayout) -> QWidget:
    """A column of controls holding ``layout``: as wide as its content (see ColumnWidth), hidden
    while the window is presenting. Where the column is narrower than a form row, the row's field
    goes under its label."""
    column = QWidget()
    column.setLayout(layout)
    for form in column.findChildren(QFormLayout):
        if form.rowWrapPolicy() == QFormLayout.RowWrapPolicy.DontWrapRows:
            form.setRowWrapPolicy(QFormLayout.RowWrapPolicy.WrapLongRows)
    column.setSizePolicy(QSizePolicy.Policy.Maximum, QSizePolicy.Policy.Preferred)
    column.setProperty(SIDE_COLUMN, True)
    column.installEventFilter(ColumnWidth(column))
    return column
