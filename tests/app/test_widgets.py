import itertools

import numpy as np
import pyqtgraph as pg
import pytest
from PySide6.QtCore import QEvent, QPointF, Qt
from PySide6.QtGui import QFontMetrics, QMouseEvent
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QApplication

from app.widgets import Heatmap, LabelledSlider, MatrixView
from app.widgets.attention_lines import LEVELS, MIN_WEIGHT, AttentionLines, lines_by_level
from app.widgets.matrix_view import number_texts, parse_number
from app.widgets.plots import WrappedTitle, loglog_plot, plot
from app.widgets.token_bars import TokenBars
from core.maths.explain import num
from tests.waits import patience_ms


def test_number_texts_match_core_formatting():
    values = np.array([[-0.001, 1.234, -np.inf, np.nan, np.inf, -2.5, 0.0, 12345.678]])
    assert number_texts(values, 2)[0] == [num(v) for v in values[0]]


@pytest.mark.parametrize("text, value", [("1.5", 1.5), ("−2", -2.0), ("3,25", 3.25), (" 4 ", 4.0)])
def test_parse_number_accepts_ordinary_numbers(text, value):
    assert parse_number(text) == value


@pytest.mark.parametrize("text", ["nan", "inf", "-inf", "x", "", "1e308", "99999999999999999999", "10001"])
def test_parse_number_refuses_the_rest(text):
    with pytest.raises(ValueError):
        parse_number(text)


def test_heatmap_keeps_fixed_levels_and_masks_cells(qtbot):
    h = Heatmap(signed=False)
    qtbot.addWidget(h)
    values = np.array([[0.2, -np.inf], [0.5, 0.5]])
    h.set_data(values, ["a", "b"], ["c", "d"], levels=(0.0, 1.0))
    assert h.image.levels.tolist() == [0.0, 1.0]
    assert np.isnan(h.image.image[0, 1]) and h.image.image[1, 0] == 0.5
    assert h.cells.texts == ["0.20", "−∞", "0.50", "0.50"]
    assert h.describe(0, 1).startswith("[a → d] = −∞")
    ticks = h.plot.getAxis("left")._tickLevels[0]
    assert [label for _, label in ticks] == ["a", "b"]


@pytest.mark.parametrize("first", ["shown", "asked for while hidden", "given data while hidden"])
def test_a_heatmap_builds_its_plot_when_first_needed_and_shows_what_it_was_given(qtbot, first):
    """The plot is built on first show or first use; data, title and levels given before are shown,
    and a plot built while hidden still shows with the heatmap."""
    from PySide6.QtWidgets import QStackedWidget, QWidget

    stack = QStackedWidget()
    qtbot.addWidget(stack)
    h = Heatmap("before")
    stack.addWidget(QWidget())
    stack.addWidget(h)
    stack.resize(300, 300)
    stack.show()
    assert not h.built
    h.set_title("scores")
    if first == "asked for while hidden":
        h.plot.setTitle("scores")
        assert h.built
    elif first == "given data while hidden":
        h.set_data(np.array([[0.0, 1.0], [0.5, 0.25]]), ["a", "b"], ["c", "d"], levels=(0.0, 2.0))
        assert not h.built
    stack.setCurrentWidget(h)
    qtbot.waitUntil(lambda: h.built and h.view.isVisible(), timeout=patience_ms(5))
    assert h.plot.titleLabel.text == "scores"
    if first == "given data while hidden":
        assert h.image.image.shape == (2, 2) and tuple(h.colorbar.levels()) == (0.0, 2.0)
        assert [label for _, label in h.plot.getAxis("top")._tickLevels[0]] == ["c", "d"]


def test_clicking_a_heatmap_cell_reports_it(qtbot):
    """A click goes through pyqtgraph's item search, which calls every item's shape()."""
    h = Heatmap()
    qtbot.addWidget(h)
    h.resize(400, 400)
    h.show()
    h.set_data(np.arange(4.0).reshape(2, 2), ["a", "b"], ["c", "d"])
    qtbot.waitExposed(h, timeout=patience_ms(5))
    centre = h.plot.vb.mapViewToScene(pg.Point(1.5, 0.5))  # row 0, column 1
    at = h.view.mapFromScene(centre)
    window = h.view.viewport().window()
    with qtbot.waitSignal(h.clicked, timeout=patience_ms(5)) as clicked:
        QTest.mouseClick(
            window.windowHandle(), Qt.MouseButton.LeftButton, pos=h.view.viewport().mapTo(window, at)
        )
    assert clicked.args == [0, 1]


@pytest.mark.parametrize("focus", [None, ("left", 3), ("right", 0)])
def test_lines_by_level_matches_a_plain_loop(focus):
    w = np.random.default_rng(2).random((7, 5)) ** 3
    expected: list[list[int]] = [[] for _ in range(LEVELS)]
    for i, j in np.ndindex(w.shape):  # row-major, as the lines are drawn
        if w[i, j] >= MIN_WEIGHT and focus in (None, ("left", i), ("right", j)):
            expected[min(int(w[i, j] * LEVELS), LEVELS - 1)] += [i, j]
    ends, starts = lines_by_level(w, focus)
    assert [ends[2 * starts[k] : 2 * starts[k + 1]].tolist() for k in range(LEVELS)] == expected
    assert starts[-1] == sum(len(e) for e in expected) // 2 > 0


def test_hovering_attention_lines_focuses_the_token_under_the_pointer(qtbot):
    lines = AttentionLines()
    qtbot.addWidget(lines)
    lines.resize(500, 400)
    lines.show()
    lines.set_data(np.full((2, 3, 3), 1 / 3), ["a", "b", "c"], ["d", "e", "f"])
    qtbot.waitExposed(lines, timeout=patience_ms(5))
    port = lines.view.viewport()
    for side, x in (("left", 0.0), ("right", 1.0)):
        at = QPointF(lines.view.mapFromScene(lines.plot.vb.mapViewToScene(pg.Point(x, 1))))
        qtbot.wait(50)  # pyqtgraph drops mouse moves that come faster than its frame rate
        with qtbot.waitSignal(lines.focused, timeout=patience_ms(5)) as focused:
            move = QMouseEvent(
                QEvent.Type.MouseMove,
                at,
                port.mapToGlobal(at),
                Qt.MouseButton.NoButton,
                Qt.MouseButton.NoButton,
                Qt.KeyboardModifier.NoModifier,
            )
            QApplication.sendEvent(port, move)
        assert focused.args == [side, 1] and lines.focus == (side, 1)


def test_heatmap_ticks_follow_labels_and_thin_out_to_fit(qtbot):
    h = Heatmap()
    qtbot.addWidget(h)
    h.resize(400, 400)
    h.show()
    h.set_data(np.eye(2), ["a", "b"], ["c", "d"])
    axis = h.plot.getAxis("top")
    ticks = axis._tickLevels
    h.set_data(np.ones((2, 2)), ["a", "b"], ["c", "d"])
    assert axis._tickLevels is ticks  # same labels: the axis is not laid out again
    h.set_data(np.ones((2, 3)), ["a", "b"], ["x", "y", "z"])
    assert [label for _, label in axis._tickLevels[0]] == ["x", "y", "z"]
    words = [f"word{i}" for i in range(64)]
    h.set_data(np.zeros((64, 64)), words, words)
    shown = [label for _, label in axis._tickLevels[0]]
    assert 1 < len(shown) < 64 and shown[0] == "word0"
    h.resize(4000, 4000)
    qtbot.waitUntil(lambda: len(axis._tickLevels[0]) > len(shown), timeout=patience_ms(5))


def test_matrix_view_edits_and_highlights(qtbot):
    m = MatrixView("M", editable=True)
    qtbot.addWidget(m)
    m.set_data(np.eye(2), ["r0", "r1"], ["c0", "c1"])
    with qtbot.waitSignal(m.edited, timeout=patience_ms(5)) as edited:
        assert m.model.setData(m.model.index(1, 0), "7")
    assert edited.args == [1, 0, 7.0]
    with qtbot.waitSignal(m.invalidEdit, timeout=patience_ms(5)) as refused:
        assert not m.model.setData(m.model.index(0, 1), "nan")
    assert "M[r0, 1]" in refused.args[0]
    m.highlight(rows=[1])
    assert m.is_highlighted(1, 0) and not m.is_highlighted(0, 0)


def test_log_slider_maps_both_ways(qtbot):
    s = LabelledSlider("T", 0.05, 20, 1.0, log=True)
    qtbot.addWidget(s)
    assert s.value() == pytest.approx(1.0)
    s.slider.setValue(s.slider.maximum())
    assert s.value() == pytest.approx(20)
    s.setValue(1000)
    assert s.value() == 20
    i = LabelledSlider("n", 1, 10, 3, integer=True)
    qtbot.addWidget(i)
    i.slider.setValue(4)
    assert i.value() == 5.0 and i.readout.text() == "5"


def test_heatmap_thins_tick_labels_to_the_space_it_has(qtbot):
    h = Heatmap()
    qtbot.addWidget(h)
    h.resize(300, 300)
    h.show()
    labels = [f"token{k}" for k in range(60)]
    h.set_data(np.zeros((60, 60)), labels, labels)
    qtbot.wait(1)
    shown = [label for _, label in h.plot.getAxis("top")._tickLevels[0]]
    assert 1 < len(shown) < 60 and shown[0] == "token0"
    h.resize(3000, 3000)
    qtbot.waitUntil(lambda: len(h.plot.getAxis("top")._tickLevels[0]) > len(shown), timeout=patience_ms(5))


def test_heatmap_without_labels_for_small_multiples(qtbot):
    h = Heatmap(labels=False)
    qtbot.addWidget(h)
    h.set_data(np.eye(3))
    assert not h.plot.getAxis("left").isVisible() and not h.plot.getAxis("top").isVisible()
    assert not h.readout.isVisibleTo(h)


def test_heatmap_writes_given_texts_into_its_cells_up_to_its_limit(qtbot):
    h = Heatmap(max_cell_texts=6)
    qtbot.addWidget(h)
    values = np.arange(6.0).reshape(2, 3) / 5
    h.set_data(values, texts=np.array([["a", "b", "c"], ["d", "e", "f"]]))
    assert h.cells.texts == ["a", "b", "c", "d", "e", "f"]
    h.set_data(values)  # no texts: the numbers again
    assert h.cells.texts[1] == "0.20"
    h.set_data(np.zeros((3, 3)), texts=np.full((3, 3), "x"))  # 9 cells > 6: none written
    assert h.cells.texts == []


def test_a_cleared_heatmap_shows_nothing_and_takes_data_again(qtbot):
    """Before a panel has a result its heatmap is cleared, not filled with NaN (the monkey counts
    NaN in a view as a fault)."""
    h = Heatmap()
    qtbot.addWidget(h)
    h.set_data(np.array([[0.2, 0.8]]), ["a"], ["b", "c"])
    h.clear()
    assert h.values.size == 0 and h.image.image is None and h.cells.texts == []
    h.set_data(np.array([[0.5]]), ["a"], ["b"])
    assert h.cells.texts == ["0.50"]


def test_a_note_breaks_a_pasted_word_of_thousands_of_characters(qtbot):
    from app.widgets.text import note

    label = note(rich=True)
    qtbot.addWidget(label)
    word = "y" * 3000
    label.setText(f"<b>New vector</b> for “{word}”: [0.1, 0.2]")
    assert label.minimumSizeHint().width() < 600
    assert label.text().replace("\u200b", "") == f"<b>New vector</b> for “{word}”: [0.1, 0.2]"
    label.resize(400, 50)
    assert label.heightForWidth(400) > 20 * label.fontMetrics().height()  # every character shows


def test_a_plot_view_asks_for_the_room_its_axis_labels_and_title_need(qtbot):
    view = plot("A title of some length", "x", "a long label along the vertical axis")
    qtbot.addWidget(view)
    QApplication.processEvents()
    item = view.getPlotItem()
    label = item.getAxis("left").label
    along = label.boundingRect().width() - 2 * label.document().documentMargin()
    assert item.vb.minimumHeight() >= along
    assert view.minimumHeight() > along  # the title and the bottom axis come on top
    assert view.minimumWidth() >= item.titleLabel.item.boundingRect().width()  # short: one line


def title_lines(item: pg.PlotItem) -> float:
    text = item.titleLabel.item
    return text.boundingRect().height() / QFontMetrics(text.font()).lineSpacing()


def test_a_long_title_wraps_when_its_plot_is_narrow_and_its_row_grows(qtbot):
    title = "Attention weights of every head against the length of the sequence"
    view = plot(title, "x", "y")
    qtbot.addWidget(view)
    view.resize(1200, 300)
    view.show()
    qtbot.waitUntil(lambda: view.getPlotItem().titleLabel.size().width() > 800, timeout=patience_ms(5))
    item = view.getPlotItem()
    one_line = item.titleLabel.item.boundingRect().height()
    assert item.titleLabel.item.textWidth() < 0  # room enough: one line
    assert view.minimumWidth() < item.titleLabel.item.boundingRect().width()  # it may wrap
    characters = item.titleLabel.item.boundingRect().width() / len(title) * WrappedTitle.LINE_CHARACTERS
    assert view.minimumWidth() >= characters
    view.resize(view.minimumWidth(), 300)
    label = item.titleLabel
    qtbot.waitUntil(lambda: label.size().height() >= 2 * one_line, timeout=patience_ms(5))
    text = label.item
    inked = label.mapRectFromItem(text, text.boundingRect())
    assert inked.left() >= -0.5 and inked.right() <= label.size().width() + 0.5
    assert item.titleLabel.item.boundingRect().height() >= 2 * one_line
    assert label.size().height() >= item.titleLabel.item.boundingRect().height() - 0.5  # the row grew
    assert item.vb.sceneBoundingRect().top() >= label.sceneBoundingRect().bottom() - 0.5
    item.setTitle("Short")  # a new title measures again, on one line
    qtbot.waitUntil(lambda: label.size().height() < 1.5 * one_line, timeout=patience_ms(5))
    item.setTitle(title)
    qtbot.waitUntil(lambda: label.size().height() >= 2 * one_line, timeout=patience_ms(5))
    item.setTitle("")  # an empty title leaves pyqtgraph's row, not the wrapped height
    qtbot.waitUntil(lambda: label.size().height() <= 30, timeout=patience_ms(5))


def test_a_plot_keeps_room_for_its_legend(qtbot):
    view = loglog_plot("Memory", "bytes")
    qtbot.addWidget(view)
    curve = view.plot([1, 10], [1, 100])
    view.getPlotItem().legend.addItem(curve, "a legend entry with a long name, longer than the axes")
    view.resize(900, 400)
    view.show()
    legend = view.getPlotItem().legend
    qtbot.waitUntil(lambda: view.getPlotItem().vb.minimumWidth() >= legend.width(), timeout=patience_ms(5))
    view.resize(view.minimumWidth(), view.minimumHeight())
    QApplication.processEvents()
    seen = view.mapToScene(view.viewport().rect()).boundingRect().adjusted(-1, -1, 1, 1)
    assert seen.contains(legend.sceneBoundingRect())


def test_token_bars_ask_for_a_text_line_per_bar(qtbot):
    bars = TokenBars("Next token")
    qtbot.addWidget(bars)
    bars.set_bars(["a", "b"], [0.5, 0.3], [True, True], 0.2)
    few = bars.plot.minimumHeight()
    labels = [f"t{k}" for k in range(12)]
    bars.set_bars(labels, [0.05] * 12, [True] * 12, 0.4)
    line = QFontMetrics(bars.plot.getPlotItem().titleLabel.item.font()).height()
    assert bars.plot.minimumHeight() >= few + 10 * line


def test_a_whole_text_field_asks_for_its_text_up_to_a_cap(qtbot):
    from PySide6.QtGui import QFont
    from PySide6.QtWidgets import QLineEdit

    from app.widgets.sizing import FIELD_COLUMN_CHARS, FIELD_MARGIN, WholeText

    field = QLineEdit("When Mary and John went to the store")
    qtbot.addWidget(field)
    WholeText(field)
    metrics = field.fontMetrics()
    assert field.minimumWidth() == metrics.horizontalAdvance(field.text()) + FIELD_MARGIN
    field.setText("word " * 100)  # longer than the cap: it scrolls inside the field
    assert field.minimumWidth() == FIELD_COLUMN_CHARS * metrics.averageCharWidth()
    field.setText("a short prompt")
    narrow = field.minimumWidth()
    font = QFont(field.font())
    font.setPointSizeF(font.pointSizeF() * 2)
    field.setFont(font)  # larger text: it asks again
    assert field.minimumWidth() == field.fontMetrics().horizontalAdvance(field.text()) + FIELD_MARGIN
    assert field.minimumWidth() > narrow


def test_a_text_box_wraps_its_text_and_grows_a_line_at_a_time(qtbot):
    from PySide6.QtGui import QKeyEvent

    from app.widgets.text import TextBox

    box = TextBox(" ".join(str(k) for k in range(40)))
    qtbot.addWidget(box)
    box.resize(2000, box.minimumSizeHint().height())
    box.show()
    QApplication.processEvents()
    one_line = box.minimumSizeHint().height()
    box.resize(200, one_line)
    QApplication.processEvents()
    assert box.minimumSizeHint().height() >= one_line + 2 * box.fontMetrics().lineSpacing()
    box.resize(box.width(), box.minimumSizeHint().height())
    QApplication.processEvents()
    assert box.verticalScrollBar().maximum() == 0  # every line shown
    box.setText("word " * 400)  # more than MAX_LINES: it scrolls rather than growing on
    QApplication.processEvents()
    assert box.minimumSizeHint().height() < (TextBox.MAX_LINES + 2) * box.fontMetrics().lineSpacing()
    finished = []
    box.editingFinished.connect(lambda: finished.append(box.text()))
    box.setText("1 2 3")
    QApplication.sendEvent(
        box, QKeyEvent(QEvent.Type.KeyPress, Qt.Key.Key_Return, Qt.KeyboardModifier.NoModifier)
    )
    assert finished == ["1 2 3"] and "\n" not in box.text()


def test_a_text_box_binds_like_a_line_edit(qtbot):
    from app.panels.binding import changed_signal, set_quietly, value_of
    from app.widgets.text import TextBox

    box = TextBox("3 9 14")
    qtbot.addWidget(box)
    heard = []
    changed_signal(box).connect(lambda *_: heard.append(value_of(box)))
    set_quietly(box, "1 2 3")  # no signal
    assert value_of(box) == "1 2 3" and heard == []
    box.setText("4 5")
    assert heard == ["4 5"]


def test_a_matrix_shrinks_its_cells_before_it_scrolls_and_grows_them_with_room(qtbot):
    from app.widgets.matrix_view import MAX_ZOOM, MIN_ZOOM

    view = MatrixView("X")
    qtbot.addWidget(view)
    view.set_data(np.arange(32.0).reshape(4, 8) / 7)
    view.show()
    least = view.minimumSizeHint()
    assert least.width() < view.natural.width()  # it may shrink below the text size ...
    view.resize(least)
    QApplication.processEvents()
    assert MIN_ZOOM <= view.zoom < 1.0
    assert not view.table.horizontalScrollBar().isVisible() and not view.table.verticalScrollBar().isVisible()
    view.resize(view.natural.width() * 3, view.natural.height() * 3 + 100)
    QApplication.processEvents()
    assert 1.0 < view.zoom <= MAX_ZOOM  # ... and grows with the room


def test_a_product_asks_for_room_to_show_its_narrowest_arrangement_unscrolled(qtbot):
    from app.widgets.product_view import ProductView

    product = ProductView(MatrixView("X"), MatrixView("W"), MatrixView("Q"))
    qtbot.addWidget(product)
    rng = np.random.default_rng(0)
    x, w = rng.normal(size=(4, 8)), rng.normal(size=(8, 4))
    product.a.set_data(x)
    product.b.set_data(w)
    product.c.set_data(x @ w)
    product.show()
    QApplication.processEvents()
    for _ in range(3):  # the least height follows the width it is given
        product.resize(product.minimumSizeHint())
        QApplication.processEvents()
    assert not product.scroller.horizontalScrollBar().isVisible()
    assert not product.scroller.verticalScrollBar().isVisible()
    wide = product.minimumSizeHint().width() * 3
    product.resize(wide, product.height())
    QApplication.processEvents()
    assert product.minimumSizeHint().height() < product.height()  # side by side: fewer lines


def test_a_list_of_tick_boxes_shows_every_item_whole_at_any_text_size(qtbot):
    from PySide6.QtGui import QFont
    from PySide6.QtWidgets import QListWidget

    from app.widgets.sizing import WholeItems

    items = QListWidget()
    qtbot.addWidget(items)
    items.addItems(["SDPA EFFICIENT_ATTENTION", "numpy naive", "FlexAttention sliding window"])
    WholeItems(items)
    items.show()
    narrow, low = items.minimumWidth(), items.height()
    font = QFont(items.font())
    font.setPointSizeF(font.pointSizeF() * 2)
    items.setFont(font)
    assert items.minimumWidth() > narrow and items.height() > low
    assert items.minimumWidth() >= items.sizeHintForColumn(0)
    assert items.height() >= sum(items.sizeHintForRow(k) for k in range(items.count()))


@pytest.mark.parametrize("width", [150, 400])
def test_pattern_captions_fit_under_their_pictures_without_overlapping(qtbot, width):
    from PySide6.QtGui import QFont

    from app.widgets.pattern_grid import PatternGrid

    grid = PatternGrid("Query → one step → target")
    qtbot.addWidget(grid)
    font = QFont(grid.font())
    font.setPointSizeF(font.pointSizeF() * 1.75)  # large text
    grid.setFont(font)
    patterns = np.sign(np.random.default_rng(0).normal(size=(3, 64)))
    grid.set_patterns(patterns, ["query", "output", "target"])
    grid.resize(width, grid.minimumSizeHint().height())
    grid.show()
    QApplication.processEvents()
    boxes = [label.sceneBoundingRect() for label in grid.labels if label.isVisible()]
    seen = grid.view.mapToScene(grid.view.viewport().rect()).boundingRect()
    assert len(boxes) == 3
    assert all(seen.contains(box) for box in boxes)
    assert all(not a.intersects(b) for k, a in enumerate(boxes) for b in boxes[k + 1 :])
    assert boxes[0].bottom() > grid.image.sceneBoundingRect().top()  # under the pictures, in the view


def drawn_tick_labels(axis) -> list:
    """The tick label rectangles ``axis`` draws, left to right (top to bottom)."""
    from PySide6.QtGui import QImage, QPainter

    image = QImage(10, 10, QImage.Format.Format_ARGB32)
    painter = QPainter(image)
    try:
        _, _, texts = axis.generateDrawSpecs(painter)
    finally:
        painter.end()
    return sorted((rect for rect, _, _ in texts), key=lambda r: (r.left(), r.top()))


@pytest.mark.parametrize("width", range(220, 420, 20))
def test_tick_labels_of_a_narrow_log_plot_at_large_text_do_not_overlap(qtbot, width):
    from PySide6.QtGui import QFont

    view = plot("How the weights sharpen with β", "β", "weight")
    qtbot.addWidget(view)
    view.setLogMode(x=True, y=False)
    font = QFont(view.font())
    font.setPointSizeF(font.pointSizeF() * 1.75)
    for side in ("bottom", "left"):
        view.getAxis(side).setStyle(tickFont=font)
    view.plot(np.geomspace(1e-3, 1e2, 121), np.linspace(0.25, 1, 121))
    view.resize(width, 340)
    view.show()
    QApplication.processEvents()
    across = drawn_tick_labels(view.getAxis("bottom"))
    assert len(across) >= 2  # still labelled
    assert all(a.right() <= b.left() for a, b in itertools.pairwise(across))
    down = sorted(drawn_tick_labels(view.getAxis("left")), key=lambda r: r.top())
    assert all(a.bottom() <= b.top() for a, b in itertools.pairwise(down))


def test_pattern_grids_built_in_a_row_draw_ink_alike(qtbot):
    """+1 is dark ink in every grid, and the shared CET-L1 map stays black → white."""
    import pyqtgraph as pg

    from app.widgets.pattern_grid import PatternGrid

    grids = [PatternGrid(f"grid {k}") for k in range(3)]
    for grid in grids:
        qtbot.addWidget(grid)
    for grid in grids:
        lut = np.asarray(grid.image.lut)
        assert lut[-1, :3].sum() < lut[0, :3].sum()  # +1 (top of the levels) darker than −1
    luts = [np.asarray(grid.image.lut) for grid in grids]
    assert all(np.array_equal(luts[0], lut) for lut in luts[1:])
    shared = pg.colormap.get("CET-L1").getLookupTable(nPts=2)
    assert shared[0, :3].sum() < shared[1, :3].sum()


def test_a_legend_below_takes_the_rows_its_width_needs_and_never_widens_its_plot(qtbot):
    from app.widgets.plots import legend_below

    view = plot("Head scores", "training step", "score")
    qtbot.addWidget(view)
    legend = legend_below(view)
    for k in range(8):
        view.plot([0, 1], [k, k], name=f"L{k // 4 + 1} H{k % 4 + 1}")
    entry = max(legend.entry_width(k) for k in range(8))
    view.resize(round(entry * 8 + 200), 400)
    view.show()
    QApplication.processEvents()
    assert legend.columnCount == 8
    view.resize(round(entry * 3.5), 400)  # room for three: three rows (3, 3, 2)
    for _ in range(3):
        QApplication.processEvents()
    assert legend.columnCount == 3 and view.minimumWidth() < entry * 2
    item = view.getPlotItem()
    assert legend.sceneBoundingRect().top() >= item.vb.sceneBoundingRect().bottom()
    assert legend.sceneBoundingRect().height() >= 3 * legend.items[0][1].height()


def test_a_matrix_shown_whole_leaves_no_strip_under_its_last_row(qtbot):
    """Room for a scroll bar only where the table is cut: the Q, K, V embeddings had a strip."""
    from PySide6.QtWidgets import QStyle, QVBoxLayout, QWidget

    page = QWidget()
    qtbot.addWidget(page)
    view = MatrixView("X")
    QVBoxLayout(page).addWidget(view)
    view.set_data(np.arange(32.0).reshape(4, 8) / 7 - 2)  # wider than the least a table asks for
    page.resize(view.natural.width() * 2, view.natural.height() * 2)
    page.show()
    for _ in range(3):
        QApplication.processEvents()
    table = view.table
    assert table.content.width() > table.minimumSizeHint().width()  # it may be cut across ...
    assert table.height() == table.content.height()  # ... but shown whole it is as tall as its rows
    assert table.viewport().height() == table.verticalHeader().length()
    bar = table.style().pixelMetric(QStyle.PixelMetric.PM_ScrollBarExtent)
    page.resize(table.minimumSizeHint().width() + 4, page.height())  # now cut across: room for the bar
    for _ in range(3):
        QApplication.processEvents()
    assert table.width() < table.content.width()
    assert table.minimumSizeHint().height() == table.content.height() + bar


def test_a_heatmap_labels_every_column_when_each_pair_of_neighbours_fits(qtbot):
    """One long word among short ones: every token labelled once the halves fit side by side
    (Multi-head's enlarged head labelled only every other token at large text)."""
    h = Heatmap(colorbar=False)
    qtbot.addWidget(h)
    labels = ["the", "suitcase", "is", "my", "bag", "of", "a", "cat"]
    h.set_data(np.zeros((8, 8)), labels, labels)
    h.show()
    metrics = QFontMetrics(h.plot.getAxis("top").style.get("tickFont") or h.font())
    long, short = metrics.horizontalAdvance("suitcase"), metrics.horizontalAdvance("the")
    gap = metrics.averageCharWidth()
    cell = ((long + short) / 2 + gap + long + gap) / 2  # room for the pairs, not for "suitcase" everywhere
    margin = h.width() - h.plot.vb.width()
    h.resize(round(8 * cell + margin + 1), 400)
    for _ in range(3):
        QApplication.processEvents()
    margin = h.width() - h.plot.vb.width()  # measured once laid out
    h.resize(round(8 * cell + margin + 1), 400)
    qtbot.waitUntil(lambda: abs(h.plot.vb.width() / 8 - cell) < 2, timeout=patience_ms(5))
    QApplication.processEvents()
    assert [label for _, label in h.plot.getAxis("top")._tickLevels[0]] == labels
    drawn = drawn_tick_labels(h.plot.getAxis("top"))
    assert len(drawn) == 8 and all(a.right() < b.left() for a, b in itertools.pairwise(drawn))


def test_heatmap_key_columns_are_labelled_first_and_by_their_short_label_where_crowded():
    """Columns a step is about get a label before the others, by their whole label in order where
    it fits and by their short one where it would collide; the rest are labelled from the left
    where they fit, none past the room's ends."""
    from app.widgets.tick_labels import fitting_labels

    labels = [f"token{k}" for k in range(10)]
    widths, centres = np.full(10, 40.0), np.arange(10) * 10.0 + 5
    key = {6: ("7", 8.0), 9: ("10", 14.0)}
    kept = dict(fitting_labels(labels, widths, centres, (-6.0, 116.0), 2.0, key, 64))
    assert kept[6] == "token6" and kept[9] == "10"  # both labelled, the second by its number
    width = {"token": 40.0, "7": 8.0, "10": 14.0}
    placed = sorted(
        (centres[k] - w / 2, centres[k] + w / 2) for k, t in kept.items() for w in [width.get(t, 40.0)]
    )
    assert all(a[1] + 2 <= b[0] for a, b in itertools.pairwise(placed))
    assert 0 not in kept and 1 in kept  # the first label would reach past the room
    assert all(lo >= -6 and hi <= 116 for lo, hi in placed)


def test_a_run_progress_bar_always_says_what_it_counts_and_has_room_for_it(qtbot):
    """An unstarted QProgressBar shows no text, and beside a button it read as an empty text box."""
    from app.widgets.progress import RunProgress

    bar = RunProgress("not run yet", "layer %v of %m", "every head knocked out", "stopped", "out of date")
    qtbot.addWidget(bar)
    seen = [bar.text()]
    bar.start()
    bar.progressed(3, 30)
    seen.append(bar.text())
    bar.stopped()
    seen.append(bar.text())
    bar.idle(stale=True)
    seen.append(bar.text())
    bar.progressed(30, 30)
    bar.finished()
    seen.append(bar.text())
    assert seen == ["not run yet", "layer 3 of 30", "stopped", "out of date", "every head knocked out"]
    assert bar.value() == bar.maximum() == 30
    widest = bar.fontMetrics().horizontalAdvance("every head knocked out")
    assert bar.minimumSizeHint().width() > widest
