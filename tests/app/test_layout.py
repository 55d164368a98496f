"""Every step of every panel fits a 1280 × 720 window (a common projector): the window needs no
more height than the screen, no view needs a horizontal scroll bar and no text is cut, with the
navigation and the lesson pane shown; captions that name a step use the panel's own step numbers.
Checked at the default text size and with the text enlarged two and four steps.

Panels are taken from PANELS, so a new panel is checked without changing this file.
"""

import itertools
import re

import pyqtgraph as pg
import pytest
from PySide6.QtCore import QRectF, QSize, Qt
from PySide6.QtGui import QFontMetrics, QImage, QPainter
from PySide6.QtWidgets import (
    QAbstractButton,
    QAbstractScrollArea,
    QApplication,
    QComboBox,
    QHeaderView,
    QLabel,
    QLayout,
    QLineEdit,
    QScrollArea,
    QSizePolicy,
    QStyle,
    QStyleOptionComboBox,
    QTabBar,
    QWidget,
)

from app import settings, worker
from app.panels import PANELS
from app.widgets.text import TextBox
from tests.app.conftest import idle
from tests.waits import patience, patience_ms

PROJECTOR = (1280, 720)
TEXT_MARGIN = 4  # pixels a line edit keeps free beside its text, besides its frame
SETTLE_ROUNDS = 5  # event rounds a shown step gets to settle its size


def shown(widget: QWidget, root: QWidget) -> bool:
    return widget.isVisibleTo(root) and widget.width() > 0


def name(widget: QWidget) -> str:
    text = next(
        (t for t in (getattr(widget, "text", lambda: "")(), widget.objectName()) if isinstance(t, str) and t),
        "",
    )
    return f"{type(widget).__name__} {text[:40]!r}"


def cut_text(widget: QWidget) -> str | None:
    """Why ``widget``'s text does not fit it, or None when it does."""
    if isinstance(widget, QLabel) and widget.text().strip() and widget.pixmap().isNull():
        if widget.wordWrap():
            needed = widget.heightForWidth(widget.width())
            if needed > widget.height():
                return f"needs {needed} px of height, has {widget.height()}"
        elif widget.minimumSizeHint().width() > widget.width():
            return f"needs {widget.minimumSizeHint().width()} px, has {widget.width()}"
    elif isinstance(widget, QAbstractButton) and widget.text():
        if widget.hasHeightForWidth():  # its text wraps
            needed = widget.heightForWidth(widget.width())
            if needed > widget.height() or widget.minimumSizeHint().width() > widget.width():
                return f"needs {needed} px of height, has {widget.height()}"
        elif widget.sizeHint().width() > widget.width():
            return f"needs {widget.sizeHint().width()} px, has {widget.width()}"
    elif isinstance(widget, QLineEdit) and widget.text():
        frame = (
            2 * widget.style().pixelMetric(QStyle.PixelMetric.PM_DefaultFrameWidth)
            if widget.hasFrame()
            else 0
        )
        margins = widget.textMargins()
        needed = QFontMetrics(widget.font()).horizontalAdvance(widget.text()) + TEXT_MARGIN + frame
        needed += margins.left() + margins.right()
        if needed > widget.width():
            return f"needs {needed} px, has {widget.width()}"
    elif isinstance(widget, QComboBox) and widget.currentText():
        option = QStyleOptionComboBox()
        widget.initStyleOption(option)
        text = QSize(widget.fontMetrics().horizontalAdvance(widget.currentText()), widget.height())
        needed = widget.style().sizeFromContents(QStyle.ContentsType.CT_ComboBox, option, text, widget)
        if needed.width() > widget.width():
            return f"needs {needed.width()} px, has {widget.width()}"
    elif isinstance(widget, TextBox) and widget.verticalScrollBar().maximum() > 0:
        return "needs more lines than it shows"
    elif isinstance(widget, QHeaderView) and widget.orientation() == Qt.Orientation.Horizontal:
        for k in range(widget.count()):
            if not widget.isSectionHidden(k) and widget.sectionSize(k) < widget.sectionSizeHint(k) - 1:
                title, size = widget.model().headerData(k, Qt.Orientation.Horizontal), widget.sectionSize(k)
                return f"column {str(title)!r} is {size} px, its title needs {widget.sectionSizeHint(k)}"
    elif isinstance(widget, QTabBar):
        for k in range(widget.count()):
            rect, hint = widget.tabRect(k), widget.tabSizeHint(k)
            if rect.right() > widget.width() or rect.width() < hint.width():
                return f"tab {widget.tabText(k)!r} is cut"
    return None


def plot_text(item: pg.GraphicsWidget) -> tuple[str, object, float] | None:
    """A plot title's or axis label's (text, text item, room along the text), when it shows one."""
    if isinstance(item, pg.LabelItem) and item.text:
        return item.text, item.item, item.size().width()
    if isinstance(item, pg.AxisItem) and item.label.isVisible() and item.labelText:
        along = item.size().height() if item.orientation in ("left", "right") else item.size().width()
        return item.labelText, item.label, along
    return None


def overlapping_ticks(axis: pg.AxisItem) -> list[tuple[str, str]]:
    """Neighbouring tick labels ``axis`` draws over each other."""
    image = QImage(10, 10, QImage.Format.Format_ARGB32)
    painter = QPainter(image)
    try:
        specs = axis.generateDrawSpecs(painter)
    finally:
        painter.end()
    if specs is None:
        return []
    across = axis.orientation in ("top", "bottom")
    texts = sorted(specs[2], key=lambda spec: spec[0].left() if across else spec[0].top())
    return [
        (a, b)
        for (ra, _, a), (rb, _, b) in itertools.pairwise(texts)
        if (ra.right() > rb.left() if across else ra.bottom() > rb.top())
    ]


def cut_plots(view: pg.GraphicsView) -> list[str]:
    """Plots that ``view`` cuts off, and plot titles or axis labels that do not fit their room.

    Qt's layouts do not see inside a plot: a title wider than its plot, or a plot needing more room
    than its view has, is drawn past the edge and clipped, while every widget still fits."""
    found = []
    seen = view.mapToScene(view.viewport().rect()).boundingRect().adjusted(-1, -1, 1, 1)
    for item in view.scene().items():
        if not item.isVisible() or not isinstance(item, pg.GraphicsWidget):
            continue
        if isinstance(item, pg.PlotItem) and not seen.contains(item.sceneBoundingRect()):
            found.append(f"plot {item.titleLabel.text[:40]!r} is cut by its view")
        if isinstance(item, pg.AxisItem) and item.style["showValues"]:
            found += [f"tick labels {pair} overlap on an axis" for pair in overlapping_ticks(item)]
        shown = plot_text(item)
        if shown is None:
            continue
        text, text_item, room = shown
        margin = text_item.document().documentMargin()  # empty room around the text
        needed = text_item.boundingRect().width() - 2 * margin
        if needed > room + 1:
            found.append(f"plot text {text[:40]!r} is cut: needs {needed:.0f} px, has {room:.0f}")
        inked = QRectF(text_item.sceneBoundingRect()).adjusted(margin, margin, -margin, -margin)
        if needed <= room + 1 and not seen.contains(inked):
            found.append(f"plot text {text[:40]!r} is cut by its view")
    return found


def problems(root: QWidget, step: int) -> list[str]:
    found = []
    for widget in root.findChildren(QWidget):
        if not shown(widget, root):
            continue
        caption = re.match(r"\s*Step (\d+):", widget.text()) if isinstance(widget, QLabel) else None
        if caption and int(caption[1]) != step + 1:
            found.append(f"{name(widget)} names step {caption[1]}; the panel calls it step {step + 1}")
        inner = widget.widget() if isinstance(widget, QScrollArea) else None
        if isinstance(widget, QAbstractScrollArea) and widget.horizontalScrollBar().isVisible():
            found.append(f"{name(widget)} needs a horizontal scroll bar")
        elif inner is not None and inner.width() > widget.viewport().width():  # and shows no bar
            found.append(f"{name(widget)} cuts off the right of its content")
        why = cut_text(widget)
        if why:
            found.append(f"{name(widget)} is cut: {why}")
        least = max(widget.minimumSizeHint().height(), widget.minimumHeight())
        if in_a_layout(widget) and widget.height() < least - 1:
            found.append(f"{name(widget)} is squeezed: {widget.height()} px of height, needs {least}")
    return found


def in_a_layout(widget: QWidget) -> bool:
    """Whether a layout places ``widget`` (not a part its parent places itself), and the widget
    may be shorter than its least height only by being drawn over its neighbours."""
    parent = widget.parentWidget()
    if parent is None or parent.layout() is None:
        return False
    if widget.sizePolicy().verticalPolicy() == QSizePolicy.Policy.Ignored:
        return False
    layouts = [parent.layout(), *parent.layout().findChildren(QLayout)]
    return any(layout.indexOf(widget) >= 0 for layout in layouts)


def plot_problems(root: QWidget) -> list[str]:
    views = [v for v in root.findChildren(pg.GraphicsView) if shown(v, root)]
    return [problem for view in views for problem in cut_plots(view)]


def projector_window(tmp_path_factory, name: str):
    """A main window of projector size with its settings in a fresh folder, shown."""
    from app.window import MainWindow

    settings.use_folder(str(tmp_path_factory.mktemp(name)))
    win = MainWindow()
    win.resize(*PROJECTOR)
    win.show()
    return win


@pytest.fixture(scope="module")
def window(qapp, tmp_path_factory):
    win = projector_window(tmp_path_factory, "settings")
    yield win
    win.close()
    assert worker.cancel_all(patience(60)), worker.running()


def navigation_cuts(window) -> list[str]:
    """Navigation titles that do not fit their rows (a title may wrap at a space)."""
    nav, metrics = window.nav, window.nav.fontMetrics()
    cut = []
    for k in range(nav.count()):
        title, row = nav.item(k).text(), nav.visualItemRect(nav.item(k))
        words = max(metrics.horizontalAdvance(word) for word in title.split())
        needed = metrics.boundingRect(0, 0, row.width(), 10_000, Qt.TextFlag.TextWordWrap, title)
        if words > row.width() or needed.height() > row.height():
            cut.append(f"navigation title {title!r} is cut")
    if nav.horizontalScrollBar().isVisible():
        cut.append("the navigation needs a horizontal scroll bar")
    return cut


def test_navigation_fits_on_one_line_a_title(window):
    assert not navigation_cuts(window)
    metrics, nav = window.nav.fontMetrics(), window.nav
    assert all(
        nav.visualItemRect(nav.item(k)).height() < 2 * metrics.lineSpacing() for k in range(nav.count())
    )


def settle(window, panel) -> None:
    """Process events until three rounds in a row change no size: a scroll bar that comes or goes
    refits the columns, and a note's least height follows its new width."""

    def sizes():
        return (
            panel.size(),
            panel.minimumSizeHint(),
            panel.pages.minimumSizeHint(),  # the step's least size reaches the panel's a round later
            window.panel_area.viewport().size(),
            window.stack.size(),
        )

    calm = 0
    for _ in range(4 * SETTLE_ROUNDS):
        before = sizes()
        QApplication.processEvents()
        calm = calm + 1 if sizes() == before else 0
        if calm == 3:
            break


def step_problems(window, key: str, step: int) -> list[str]:
    """What does not fit when step ``step`` of panel ``key`` is shown in a projector-sized window."""
    panel = window.show_panel(key)
    panel.set_step(step)
    idle()
    window.resize(*PROJECTOR)
    QApplication.processEvents()
    for _ in range(SETTLE_ROUNDS):  # views built when first shown measure themselves afterwards
        least = panel.minimumSizeHint()
        QApplication.processEvents()
        if panel.minimumSizeHint() == least:
            break
    window.fit_side_columns()  # as for a fresh window: the result does not depend on earlier steps
    settle(window, panel)
    found = problems(panel, step) + plot_problems(panel) + navigation_cuts(window) + lesson_problems(window)
    handles = window.splitter.handleWidth() * (window.splitter.count() - 1)
    room = PROJECTOR[0] - window.nav.width() - window.lesson.minimumWidth() - handles
    needed = window.panel_area.minimumSizeHint().width()  # the panel, and room for a scroll bar
    if needed > room:
        found.append(f"the panel needs {needed} px, more than the {room} px it has")
    shown_width = window.panel_area.viewport().width()
    if panel.width() > shown_width:
        found.append(f"the panel is {panel.width()} px wide, its window shows {shown_width}")
    tall = max(window.height(), window.minimumSizeHint().height())
    if tall > PROJECTOR[1]:  # the screen would cut the bottom off
        found.append(f"the window needs {tall} px of height, more than the {PROJECTOR[1]} px of the screen")
    return [f"step {step + 1} ({panel.steps[step]}): {p}" for p in found]


def lesson_problems(window) -> list[str]:
    """What the lesson pane cuts off: text past its right edge, or the current step's heading
    away from the top (the pane opened mid-section)."""
    pane = window.lesson
    found = []
    if pane.document().size().width() > pane.viewport().width() or pane.horizontalScrollBar().maximum():
        found.append(
            f"the lesson pane cuts its text at the right: {pane.document().size().width():.0f} px "
            f"wide, {pane.viewport().width()} px shown"
        )
    block = pane.heading(window.current().step)
    if block is not None:
        top = pane.document().documentLayout().blockBoundingRect(block).top()
        if abs(top - pane.verticalScrollBar().value()) > 1:
            found.append(
                f"the lesson pane shows {top - pane.verticalScrollBar().value():.0f} px above "
                f"the heading {block.text()!r}, not the heading at its top"
            )
    return found


@pytest.mark.parametrize("cls", PANELS, ids=[cls.key for cls in PANELS])
def test_every_step_fits_a_projector(window, cls):
    failures = []
    for step in range(len(cls.steps)):
        failures += step_problems(window, cls.key, step)
        if window.panel_area.verticalScrollBar().isVisible():  # at the default text size, no need
            failures.append(f"step {step + 1} ({cls.steps[step]}): the panel scrolls up and down")
    assert not failures, "\n".join(failures)


def test_presenting_hides_the_side_columns_and_back(window):
    window.show_panel(PANELS[0].key)
    window.presenting_action.trigger()
    assert window.presenting
    assert not window.nav.isVisible() and not window.lesson.isVisible() and not window.menuBar().isVisible()
    columns = [w for w in window.current().findChildren(QWidget) if w.property("side_column")]
    assert all(not w.isVisible() for w in columns)
    window.presenting_action.trigger()
    assert window.nav.isVisible() and window.lesson.isVisible() and window.menuBar().isVisible()
    assert all(w.isVisible() for w in columns)


def test_presenting_is_remembered(qapp, tmp_path):
    from app.window import MainWindow

    settings.use_folder(str(tmp_path))
    first = MainWindow()
    first.set_presenting(True)
    first.save_state()
    first.deleteLater()
    again = MainWindow()
    assert again.presenting and again.presenting_action.isChecked() and again.nav.isHidden()
    again.set_presenting(False)
    assert not again.nav.isHidden() and again.menuBar().isVisibleTo(again)
    again.deleteLater()


def test_step_tabs_shorten_to_numbers_when_they_do_not_fit(qtbot):
    from app.panels.base import StepBar

    bar = StepBar(("A long first step name", "A long second step name", "A long third step name"))
    qtbot.addWidget(bar)
    bar.resize(2000, 30)
    bar.show()
    assert [bar.tabText(k) for k in range(3)] == bar.names
    bar.resize(bar.tabSizeHint(0).width() + 80, 30)
    bar.setCurrentIndex(2)
    assert [bar.tabText(k) for k in range(3)] == ["1", "2", "3. A long third step name"]
    assert bar.tabToolTip(0) == "1. A long first step name"


LARGER_TEXT = (2, 4)  # steps of View → Larger text


@pytest.fixture(scope="module", params=LARGER_TEXT, ids=[f"text+{k}" for k in LARGER_TEXT])
def large_text(qapp, tmp_path_factory, request):
    """A window of its own whose panels are built at a larger text size."""
    from app.window import SCALE_STEP

    win = projector_window(tmp_path_factory, f"large{request.param}")
    win.set_font_scale(SCALE_STEP**request.param)
    QApplication.processEvents()
    yield win
    win.set_font_scale(1.0)
    win.close()
    assert worker.cancel_all(patience(60)), worker.running()


@pytest.mark.parametrize(
    "key, step",
    [(cls.key, step) for cls in PANELS for step in range(len(cls.steps))],
    ids=[f"{cls.key}-{step + 1}" for cls in PANELS for step in range(len(cls.steps))],
)
def test_every_step_fits_a_projector_at_larger_text(large_text, key, step):
    failures = step_problems(large_text, key, step)
    assert not failures, "\n".join(failures)


def test_a_reflowing_grid_adds_rows_when_narrow(qtbot):
    from PySide6.QtWidgets import QPushButton

    from app.widgets.reflow_grid import ReflowGrid

    host = QWidget()
    qtbot.addWidget(host)
    a, b, c = (QPushButton(text * 20) for text in "abc")
    grid = ReflowGrid(((a, 0, 0, 1), (b, 0, 1, 1), (c, 0, 2, 1)), ((a, 0, 0, 1), (b, 1, 0, 1), (c, 2, 0, 1)))
    host.setLayout(grid)
    wide = sum(w.sizeHint().width() for w in (a, b, c))
    assert grid.minimumSize().width() < wide  # its least width is one button's
    host.resize(2 * wide, 300)
    host.show()
    QApplication.processEvents()
    assert a.y() == b.y() == c.y()
    host.resize(a.sizeHint().width() + 20, 300)
    QApplication.processEvents()
    assert a.y() < b.y() < c.y() and a.x() == b.x() == c.x()
    host.resize(2 * wide, 300)
    QApplication.processEvents()
    assert a.y() == b.y() == c.y()  # and back


def test_styled_widgets_follow_the_text_size_when_it_changes(window):
    """View → Larger text reaches the widgets with a style sheet too (the pattern buttons, the
    message bar): Qt leaves them at the font they were styled with."""
    from app.window import SCALE_STEP

    for cls in PANELS:
        window.show_panel(cls.key)
        idle()
    window.current().show_message("A message shown before the text grows.", "warning")
    try:
        window.set_font_scale(SCALE_STEP**3)
        QApplication.processEvents()
        size = QApplication.font().pointSizeF()
        stuck = [
            f"{name(w)}: {w.font().pointSizeF():.1f} pt"
            for w in window.findChildren(QWidget)
            if w.styleSheet() and "font" not in w.styleSheet() and w.font().pointSizeF() != size
        ]
        bar = window.current().message
        assert bar.height() >= bar.heightForWidth(bar.width())  # the message shows whole
    finally:
        window.set_font_scale(1.0)
        window.current().clear_message()
    assert not stuck, f"at {size:.1f} pt:\n" + "\n".join(stuck)


def split_words(table) -> list[str]:
    """The words of ``table``'s cells that its lines break inside, as "wo|rd"."""
    split = []
    for row, column in itertools.product(range(table.rows()), range(table.columns())):
        block = table.cellAt(row, column).firstCursorPosition().block()
        text, layout = block.text(), block.layout()
        for k in range(layout.lineCount()):
            end = layout.lineAt(k).textStart() + layout.lineAt(k).textLength()
            # a line may end at a space or at a zero-width break (between the parts of code)
            if 0 < end < len(text) and not {text[end - 1], text[end]} & {" ", "\u200b"}:
                split.append(f"{text[:end]}|{text[end:]}")
    return split


NARROW_TABLE = (
    "| head | entropy of a row | suitcase |\n|---|---|---|\n"
    "| layer 4, head 2 | mean entropy | suitcase suitcase |\n"
)


def lesson_pane(qtbot, markdown: str, width: int):
    """A lesson pane at the normal text size, whatever size a window of ``large_text`` (alive
    until this module ends) has given the application."""
    from PySide6.QtGui import QFont

    from app.window import LessonPane

    pane = LessonPane()
    qtbot.addWidget(pane)
    base = QApplication.instance().property("base_point_size")
    if base is not None:
        font = QFont(QApplication.font())
        font.setPointSizeF(float(base))
        pane.setFont(font)
    pane.setMarkdown(markdown)
    pane.resize(width, 300)
    pane.show()
    for _ in range(3):
        QApplication.processEvents()
    pane.document().documentLayout().documentSize()  # lay it all out
    return pane


def test_the_lesson_pane_keeps_the_words_of_a_narrow_table_whole(qtbot):
    """A table column narrower than its words wrapped them mid-word ("entr opy", "suitcas e"),
    where tighter cells and a smaller font let them fit."""
    pane = lesson_pane(qtbot, NARROW_TABLE, 230)
    (table,) = pane.document().rootFrame().childFrames()
    assert not split_words(table)
    assert pane.document().size().width() <= pane.viewport().width()


def test_the_lesson_pane_breaks_words_rather_than_cut_them_off(qtbot):
    """Narrower than a table's words, or than a heading's word at lecture size: the words break,
    nothing runs past the pane's right edge (which cut "dow" of a table and a code span), and a
    table whose words fit keeps them whole."""
    pane = lesson_pane(qtbot, NARROW_TABLE, 120)
    assert pane.document().size().width() <= pane.viewport().width()
    assert pane.horizontalScrollBar().maximum() == 0
    markdown = "# Unbreakablewordinaheading\n\nSee `torch.cuda.max_memory_allocated`.\n\n" + NARROW_TABLE
    pane = lesson_pane(qtbot, markdown, 240)
    assert pane.document().size().width() <= pane.viewport().width()
    (table,) = pane.document().rootFrame().childFrames()
    assert not split_words(table)


def test_the_lesson_pane_brings_every_sections_heading_to_the_top(qtbot):
    """The last sections are short: the pane stopped at the end of the text with their heading
    halfway down, under the end of the section before."""
    long = "A line of the lesson that is long enough to wrap in a narrow pane. " * 12
    markdown = f"# Lesson\n\n{long}\n\n## One\n\n{long}\n\n## Two\n\n{long}\n\n## Three\n\nShort.\n"
    pane = lesson_pane(qtbot, markdown, 260)
    for section in (2, 0, 1, 2):
        pane.show_section(section)
        block = pane.heading(section)
        qtbot.waitUntil(
            lambda b=block: (
                pane.verticalScrollBar().value()
                == round(pane.document().documentLayout().blockBoundingRect(b).top())
            ),
            timeout=patience_ms(5),
        )
