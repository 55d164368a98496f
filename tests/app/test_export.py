"""Export: every view gives a PNG of the asked width, an SVG that parses, and a CSV of its numbers."""

import csv
import xml.etree.ElementTree as ET

import numpy as np
import pyqtgraph as pg
import pytest
from PySide6.QtCore import QEvent, QPoint
from PySide6.QtGui import QContextMenuEvent, QImage
from PySide6.QtWidgets import QApplication, QWidget

from app.panels import PANELS
from app.widgets import Heatmap, MatrixView, export

TOKENS = ["the", "cat", "sat"]
VALUES = np.array([[0.5, -1.25, 3.0], [1e-9, -np.inf, 2.0 / 3.0], [7.0, 0.0, -0.1]])


def assert_png(path, width):
    image = QImage(str(path))
    assert not image.isNull() and image.width() == width and image.height() > 10


def assert_svg(path):
    root = ET.parse(path).getroot()
    assert root.tag.endswith("svg") and len(root) > 0


@pytest.fixture(params=[Heatmap, MatrixView])
def matrix_view(request, qtbot):
    view = request.param("weights")
    qtbot.addWidget(view)
    view.resize(500, 400)
    view.show()
    view.set_data(VALUES, TOKENS, TOKENS)
    return view


def test_matrix_views_export_png_svg_and_csv(matrix_view, tmp_path):
    size = export.save_png(matrix_view, tmp_path / "m.png", 1920)
    assert size.width() == 1920
    assert_png(tmp_path / "m.png", 1920)
    export.save_svg(matrix_view, tmp_path / "m.svg")
    assert_svg(tmp_path / "m.svg")
    export.save_csv(matrix_view, tmp_path / "m.csv")
    values, rows, cols = export.read_matrix_csv(tmp_path / "m.csv")
    np.testing.assert_array_equal(values, VALUES)  # exact, −∞ included
    assert rows == TOKENS and cols == TOKENS


def test_plot_csv_lists_every_point_with_its_token_label(qtbot, tmp_path):
    plot = pg.PlotWidget(title="weights")
    qtbot.addWidget(plot)
    x, y = np.arange(3.0), np.array([0.2, 0.3, 0.5])
    plot.plot(x, y, name="row 0")
    plot.addItem(pg.BarGraphItem(x=x, height=y[::-1], width=0.8))
    plot.getAxis("bottom").setTicks([list(enumerate(TOKENS))])
    export.save_csv(plot, tmp_path / "p.csv")
    with open(tmp_path / "p.csv", newline="") as handle:
        header, *rows = list(csv.reader(handle))
    assert header == export.PLOT_HEADER
    curve = [r for r in rows if r[1] == "row 0"]
    bars = [r for r in rows if r[1] != "row 0"]
    np.testing.assert_array_equal([float(r[3]) for r in curve], y)
    np.testing.assert_array_equal([float(r[3]) for r in bars], y[::-1])
    assert [r[5] for r in curve] == TOKENS
    export.save_png(plot, tmp_path / "p.png", 800)
    assert_png(tmp_path / "p.png", 800)
    export.save_svg(plot, tmp_path / "p.svg")
    assert_svg(tmp_path / "p.svg")


def test_bad_width_is_refused(matrix_view, tmp_path):
    with pytest.raises(ValueError, match="between"):
        export.save_png(matrix_view, tmp_path / "x.png", 5)
    assert not (tmp_path / "x.png").exists()


@pytest.mark.parametrize("cls", PANELS, ids=lambda c: c.key)
def test_every_view_of_every_panel_gets_the_menu(window, cls, tmp_path):
    panel = window.show_panel(cls.key)
    targets = export.export_targets(panel)
    named = [v for v in panel.export().values() if isinstance(v, (Heatmap, MatrixView, pg.GraphicsView))]
    assert {id(v) for v in named} <= {id(t) for t in targets}
    assert targets and all(t.property(export.MENU_PROPERTY) for t in targets)
    first = next(t for t in targets if t.isVisibleTo(panel))
    export.save_png(first, tmp_path / "v.png", 640)
    assert_png(tmp_path / "v.png", 640)
    export.save_svg(first, tmp_path / "v.svg")
    assert_svg(tmp_path / "v.svg")
    export.save_csv(first, tmp_path / "v.csv")
    with open(tmp_path / "v.csv", newline="") as handle:
        header = next(csv.reader(handle))
    if isinstance(first, (Heatmap, MatrixView)):
        values, rows, cols = export.read_matrix_csv(tmp_path / "v.csv")
        np.testing.assert_array_equal(values, first.values)
        assert (rows, cols) == (first.row_labels, first.col_labels)
    else:
        assert header == export.PLOT_HEADER


def test_right_click_opens_the_export_menu(window, monkeypatch):
    panel = window.show_panel("qkv")
    target = next(t for t in export.export_targets(panel) if isinstance(t, Heatmap))
    menu = target.findChild(export.ExportMenu)
    assert [a.text() for a in menu.menu().actions()] == [
        "Export PNG…",
        "Export SVG…",
        "Export CSV of the numbers…",
    ]
    shown = []

    class FakeMenu:
        def exec(self, pos):
            shown.append(pos)

    monkeypatch.setattr(menu, "menu", FakeMenu)
    event = QContextMenuEvent(QContextMenuEvent.Reason.Mouse, QPoint(5, 5), QPoint(50, 50))
    assert event.type() == QEvent.Type.ContextMenu
    QApplication.sendEvent(target.view.viewport(), event)
    assert shown == [QPoint(50, 50)]


def test_whole_panel_renders_at_the_chosen_scale(window, tmp_path):
    panel = window.show_panel("qkv")
    size = export.render_png(panel, tmp_path / "panel.png", 2.0)
    image = QImage(str(tmp_path / "panel.png"))
    assert (image.width(), image.height()) == (size.width(), size.height())
    assert image.width() == 2 * panel.width() and image.height() == 2 * panel.height()
    grid = {image.pixel(x, y) for x in range(0, image.width(), 9) for y in range(0, image.height(), 9)}
    assert len(grid) > 20  # the panel's text and colours, not an empty canvas


def test_plain_widgets_have_no_numbers(qtbot, tmp_path):
    with pytest.raises(ValueError, match="no numbers"):
        export.save_csv(QWidget(), tmp_path / "x.csv")


def test_a_log_axis_exports_the_values_not_their_logarithms(qtbot, tmp_path):
    plot = pg.PlotWidget()
    qtbot.addWidget(plot)
    plot.setLogMode(x=True, y=True)
    plot.plot([10.0, 100.0, 1000.0], [2.0, 20.0, 200.0], name="curve")
    export.save_csv(plot, tmp_path / "log.csv")
    with open(tmp_path / "log.csv", newline="", encoding="utf-8") as handle:
        rows = list(csv.reader(handle))[1:]
    assert [(float(r[2]), float(r[3])) for r in rows] == [(10.0, 2.0), (100.0, 20.0), (1000.0, 200.0)]


def test_horizontal_bars_export_their_lengths(qtbot, tmp_path):
    plot = pg.PlotWidget()
    qtbot.addWidget(plot)
    plot.addItem(pg.BarGraphItem(x0=[0, 0], y=[0, 1], height=0.7, width=[0.25, 0.5]))
    rows = export.plot_rows(plot)[1:]
    assert [(float(r[2]), float(r[3])) for r in rows] == [(0.0, 0.25), (1.0, 0.5)]
