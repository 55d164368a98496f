"""LessonPane: the lesson text beside the panel, kept at the current step's section.

The text is laid out again whenever the pane's width or the text size changes, so that nothing
is cut at the pane's right edge: code and identifiers may break after "." and "_" (never
numbers, never words); a table still wider than the pane gets tighter cells, then a smaller
font (down to the last of TABLE_SCALES of the text size); and if a word is still wider than its
room (a narrow pane at lecture size), words that do not fit their line break where they must,
while the tables that fit keep their columns. Code spans follow the text size (Qt's Markdown
reader gives them the system's fixed font size, which Ctrl+= would leave behind). Under the last
section there is room enough for any section's heading to come to the top of the pane.
"""

from __future__ import annotations

import re

from PySide6.QtCore import QEvent, Qt, QTimer
from PySide6.QtGui import QTextCharFormat, QTextCursor, QTextDocument, QTextLength, QTextOption, QTextTable
from PySide6.QtWidgets import QTextBrowser

BREAK = "\u200b"  # zero-width space: where a line may break, drawn as nothing
TIGHT_PADDING = 2  # pixels of cell padding of a table too wide for the pane (Qt's Markdown: 4)
TABLE_SCALES = (0.92, 0.85, 0.78)  # text sizes a too-wide table tries, in turn, before breaking words
WIDE_TABLE_PERCENTS = (100, 98, 95)  # of the pane's width, for a table whose words break
CODE_BREAKS = re.compile(r"(?<=[^\W\d)][._/])(?=[\w(])|(?<=\w,)(?=\w)")  # after "." "_" "/" "," in code
TEXT_BREAKS = re.compile(r"(?<=[^\W\d]_)(?=[^\W\d])")  # after "_" between letters (FLASH_ATTENTION)


class LessonPane(QTextBrowser):
    """The lesson text, kept at the current step's section (its (step+1)-th level-2 heading at the
    top), also when the text reflows because the pane's width or the text size changed."""

    def __init__(self):
        super().__init__()
        self.section = 0
        self.markdown = ""
        self.laid_out_for: tuple | None = None  # (viewport width, font) the text was fitted to
        self.setOpenExternalLinks(True)
        self.setWordWrapMode(QTextOption.WrapMode.WordWrap)  # a narrow table column keeps its words whole
        # always there, so the width the text is fitted to does not depend on the text's length
        self.setVerticalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOn)
        self.timer = QTimer(self)
        self.timer.setSingleShot(True)
        self.timer.setInterval(0)  # after the events in flight (a font change re-lays the text out)
        self.timer.timeout.connect(self._scroll)

    def setMarkdown(self, markdown: str) -> None:
        self.markdown = markdown
        self.laid_out_for = None
        if self.isVisible():
            self._fit()
        else:  # its width is not known yet: fitted once shown (_scroll), not twice
            super().setMarkdown(markdown)
        self.timer.start()

    def show_section(self, step: int) -> None:
        self.section = step
        self.timer.start()

    def resizeEvent(self, event) -> None:
        super().resizeEvent(event)
        if event.size().width() != event.oldSize().width():
            self.timer.start()

    def changeEvent(self, event) -> None:
        super().changeEvent(event)
        if event.type() == QEvent.Type.FontChange:
            self.timer.start()

    def heading(self, section: int):
        """The block of the (section+1)-th level-2 heading, or None."""
        block, seen = self.document().begin(), -1
        while block.isValid():
            if block.blockFormat().headingLevel() == 2:
                seen += 1
                if seen == section:
                    return block
            block = block.next()
        return None

    def _scroll(self) -> None:
        """Fit the text to the pane, leave room under it, and bring the heading of ``section`` to
        the top."""
        self._fit()
        doc = self.document()
        layout = doc.documentLayout()
        layout.documentSize()  # lays the whole text out, so block positions are current
        block = self.heading(self.section)
        top = layout.blockBoundingRect(block).top() if block is not None else 0.0
        frame = doc.rootFrame()
        shape = frame.frameFormat()
        below = shape.bottomMargin()
        text_height = layout.documentSize().height() - below
        wanted = max(doc.documentMargin(), top + self.viewport().height() - text_height)
        if abs(wanted - below) >= 1:
            shape.setBottomMargin(wanted)
            frame.setFrameFormat(shape)
            layout.documentSize()
        self.verticalScrollBar().setValue(round(top))

    def _fit(self) -> None:
        """Lay the Markdown out again for the pane's width and text size, if either changed."""
        key = (self.viewport().width(), self.font().key())
        if key == self.laid_out_for:
            return
        self.laid_out_for = key
        self.setWordWrapMode(QTextOption.WrapMode.WordWrap)
        super().setMarkdown(self.markdown)
        doc = self.document()
        size = self.font().pointSizeF()
        add_breaks(doc, size)
        room = self.viewport().width() - 2 * doc.documentMargin()
        for table in tables(doc):
            fit_table(doc, table, room, size)
        if doc.documentLayout().documentSize().width() > self.viewport().width():
            # a word wider than the pane (a table's, a heading's): break such words where they
            # must, keeping the tables that fit as they are
            wide = []
            for table in tables(doc):
                if table_width(doc, table) <= room:
                    pin_columns(doc, table)
                else:
                    wide.append(table)
            self.setWordWrapMode(QTextOption.WrapMode.WrapAtWordBoundaryOrAnywhere)
            for table in wide:  # Qt's table layout can round a pixel past its room
                for percent in WIDE_TABLE_PERCENTS:
                    if table_width(doc, table) <= room:
                        break
                    shape = table.format()
                    shape.setWidth(QTextLength(QTextLength.Type.PercentageLength, percent))
                    table.setFormat(shape)


def add_breaks(doc: QTextDocument, size: float) -> None:
    """Let code and identifiers break after "." "_" "/" (BREAK), and give code ``size`` points."""
    at: list[int] = []
    code: list[tuple[int, int]] = []  # (start, end) of each code span
    block = doc.begin()
    while block.isValid():
        pieces = block.begin()
        while not pieces.atEnd():
            piece = pieces.fragment()
            fixed = piece.charFormat().fontFixedPitch()
            pattern = CODE_BREAKS if fixed else TEXT_BREAKS
            at += [piece.position() + m.start() for m in pattern.finditer(piece.text())]
            if fixed:
                code.append((piece.position(), piece.position() + piece.length()))
            pieces += 1
        block = block.next()
    sized = QTextCharFormat()
    sized.setFontPointSize(size)
    cursor = QTextCursor(doc)
    for start, end in code:  # formats change no position
        cursor.setPosition(start)
        cursor.setPosition(end, QTextCursor.MoveMode.KeepAnchor)
        cursor.mergeCharFormat(sized)
    insert_breaks(doc, at)


def insert_breaks(doc: QTextDocument, positions: list[int]) -> None:
    cursor = QTextCursor(doc)
    for position in sorted(positions, reverse=True):  # from the end: earlier positions stay put
        cursor.setPosition(position)
        cursor.insertText(BREAK)


def tables(doc: QTextDocument) -> list[QTextTable]:
    found, frames = [], [doc.rootFrame()]
    while frames:
        frame = frames.pop()
        frames += frame.childFrames()
        if isinstance(frame, QTextTable):
            found.append(frame)
    return found


def table_width(doc: QTextDocument, table: QTextTable) -> float:
    doc.documentLayout().documentSize()  # laid out
    return doc.documentLayout().frameBoundingRect(table).width()


def fit_table(doc: QTextDocument, table: QTextTable, room: float, size: float) -> None:
    """Narrow ``table`` towards ``room`` pixels: tighter cells, then a smaller font."""
    if table_width(doc, table) <= room:
        return
    shape = table.format()
    shape.setCellPadding(TIGHT_PADDING)
    table.setFormat(shape)
    for scale in TABLE_SCALES:
        if table_width(doc, table) <= room:
            return
        smaller = QTextCharFormat()
        smaller.setFontPointSize(size * scale)
        block = QTextCursor(doc)
        block.beginEditBlock()  # one layout for all the cells, not one per cell
        for cursor in cell_cursors(table):
            cursor.mergeCharFormat(smaller)
        block.endEditBlock()


def pin_columns(doc: QTextDocument, table: QTextTable) -> None:
    """Fix ``table``'s columns at the widths they have now (so that a text that breaks words
    where it must does not squeeze a table whose words fit)."""
    layout, shape = doc.documentLayout(), table.format()
    extra = 2 * shape.cellPadding() + shape.border()  # a column's width around its text
    widths = [
        layout.blockBoundingRect(table.cellAt(0, column).firstCursorPosition().block()).width() + extra
        for column in range(table.columns())
    ]
    shape.setColumnWidthConstraints([QTextLength(QTextLength.Type.FixedLength, w) for w in widths])
    table.setFormat(shape)


def cell_cursors(table: QTextTable) -> list[QTextCursor]:
    """A cursor selecting the text of each of ``table``'s cells."""
    cursors = []
    for row in range(table.rows()):
        for column in range(table.columns()):
            cell = table.cellAt(row, column)
            cursor = cell.firstCursorPosition()
            cursor.setPosition(cell.lastCursorPosition().position(), QTextCursor.MoveMode.KeepAnchor)
            cursors.append(cursor)
    return cursors
