"""Text that wraps: notes beside a view, a wrapping text field and button, a column of notes that
scrolls. Words longer than BREAK_CHARS characters break anywhere, so typed text never widens a page.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable

from PySide6.QtCore import QEvent, QObject, QRect, QSize, Qt, Signal
from PySide6.QtGui import QTextOption
from PySide6.QtWidgets import (
    QLabel,
    QPlainTextEdit,
    QPushButton,
    QScrollArea,
    QSizePolicy,
    QStyle,
    QStyleOptionButton,
    QVBoxLayout,
    QWidget,
)

from app.widgets.sizing import OwnHeight

BREAK_CHARS = 30  # a wrapping label may break a word after this many characters
LONG_WORD = re.compile(rf"[^\s\u200b]{{{BREAK_CHARS + 1},}}")
ZERO_WIDTH_SPACE = "\u200b"


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


class Note(OwnHeight, QLabel):
    """A wrapping label whose text may hold what a person typed: long words break anywhere."""

    room: tuple[str, ...] = ()  # texts whose height the label keeps (keep_room_for)
    least_chars = 0  # the least width in average characters of the current font (0: its longest word)
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
        hint.setWidth(max(hint.width(), self.least_chars * self.fontMetrics().averageCharWidth()))
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
