"""Export any view of a panel: PNG (at a chosen width), SVG, or CSV of the numbers it shows.

``attach_exports(root, names)`` gives every Heatmap, MatrixView and pyqtgraph view under ``root``
a right-click menu, so a panel needs no code of its own. pyqtgraph views are written with
pyqtgraph's exporters; Qt widgets (MatrixView, a whole panel) are painted at the chosen scale, so
text and lines stay crisp instead of being an enlarged screenshot.
"""

from __future__ import annotations

import csv
import math
from collections.abc import Mapping
from pathlib import Path

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QEvent, QObject, QPoint, QRect, QSize
from PySide6.QtGui import QImage, QPainter, QPalette, QRegion
from PySide6.QtWidgets import QFileDialog, QInputDialog, QMenu, QWidget

from app.settings import settings
from app.widgets.heatmap import Heatmap
from app.widgets.matrix_view import MatrixView

DEFAULT_WIDTH = 1920  # pixels: a full-HD slide
MIN_WIDTH, MAX_WIDTH = 100, 10000
MENU_PROPERTY = "export_menu_attached"


# --- what can be exported -----------------------------------------------------------------------
def export_targets(root: QWidget) -> list[QWidget]:
    """Every Heatmap, MatrixView and pyqtgraph view under ``root`` (a view inside a Heatmap is
    the Heatmap), in creation order."""
    return [
        widget
        for widget in root.findChildren(QWidget)
        if isinstance(widget, (Heatmap, MatrixView))
        or (isinstance(widget, pg.GraphicsView) and not _inside(widget, Heatmap, root))
    ]


def _inside(widget: QWidget, kind: type, root: QWidget) -> bool:
    parent = widget.parentWidget()
    while parent is not None and parent is not root:
        if isinstance(parent, kind):
            return True
        parent = parent.parentWidget()
    return False


def _graphics_item(target: QWidget):
    """The pyqtgraph item a pyqtgraph exporter renders for ``target``."""
    view = target.view if isinstance(target, Heatmap) else target
    return view.centralWidget if isinstance(view, pg.GraphicsView) else None


# --- PNG and SVG ------------------------------------------------------------------------------
def save_png(target: QWidget, path: str | Path, width: int = DEFAULT_WIDTH) -> QSize:
    """Write ``target`` as a PNG ``width`` pixels wide (height keeps the aspect ratio)."""
    if not MIN_WIDTH <= width <= MAX_WIDTH:
        raise ValueError(f"Choose an image width between {MIN_WIDTH} and {MAX_WIDTH} pixels.")
    item = _graphics_item(target)
    if item is None:
        rect = _content_rect(target)
        return render_png(target, path, width / max(rect.width(), 1), rect)
    import pyqtgraph.exporters as pg_exporters  # here, not at start-up: it takes a few ms to import

    exporter = pg_exporters.ImageExporter(item)
    exporter.parameters()["background"] = _background(target)
    exporter.parameters()["width"] = width
    image: QImage = exporter.export(toBytes=True)
    if image.width() != width:  # the exporter rounds the height from the width; keep the width exact
        image = image.scaledToWidth(width)
    _save_image(image, path)
    return image.size()


def render_png(widget: QWidget, path: str | Path, scale: float = 2.0, rect: QRect | None = None) -> QSize:
    """Paint ``widget`` (or its ``rect``) ``scale`` times its on-screen size into a PNG.

    Painting at scale keeps text and lines sharp, unlike enlarging a screenshot.
    """
    if not 0.1 <= scale <= 10:
        raise ValueError("Choose a scale between 0.1 and 10.")
    rect = rect or widget.rect()
    size = QSize(max(1, round(rect.width() * scale)), max(1, round(rect.height() * scale)))
    image = QImage(size, QImage.Format.Format_ARGB32)
    image.fill(widget.palette().color(QPalette.ColorRole.Window))
    painter = QPainter(image)
    painter.setRenderHints(QPainter.RenderHint.Antialiasing | QPainter.RenderHint.TextAntialiasing)
    painter.scale(size.width() / max(rect.width(), 1), size.height() / max(rect.height(), 1))
    QWidget.render(widget, painter, QPoint(), QRegion(rect))  # the widget's, not QGraphicsView's render
    painter.end()
    _save_image(image, path)
    return size


def save_svg(target: QWidget, path: str | Path) -> None:
    """Write ``target`` as an SVG drawing.

    pyqtgraph's SVG exporter cannot read back some paths Qt writes (closed outlines, "Z"); those
    views are painted into the SVG by Qt instead, which is just as much a vector drawing.
    """
    import pyqtgraph.exporters as pg_exporters
    from PySide6.QtSvg import QSvgGenerator

    item = _graphics_item(target)
    if item is not None:
        exporter = pg_exporters.SVGExporter(item)
        exporter.parameters()["background"] = _background(target)
        try:
            exporter.export(fileName=str(path))
            return
        except ValueError:
            pass
    rect = _content_rect(target)
    generator = QSvgGenerator()
    generator.setFileName(str(path))
    generator.setSize(rect.size())
    generator.setViewBox(QRect(QPoint(), rect.size()))
    generator.setTitle(_title(target))
    painter = QPainter(generator)
    QWidget.render(target, painter, QPoint(), QRegion(rect))  # the widget's, not QGraphicsView's render
    painter.end()


def _content_rect(target: QWidget) -> QRect:
    """The part of a MatrixView worth a picture: its title and table (not the empty stretch)."""
    if isinstance(target, MatrixView):
        return target.title.geometry().united(target.table.geometry())
    return target.rect()


def _background(target: QWidget):
    view = target.view if isinstance(target, Heatmap) else target
    return view.backgroundBrush().color() if isinstance(view, pg.GraphicsView) else None


def _save_image(image: QImage, path: str | Path) -> None:
    if not image.save(str(path), "PNG"):
        raise OSError(f"Could not write {path}; check the folder exists and you may write to it.")


def _title(target: QWidget) -> str:
    if isinstance(target, MatrixView):
        return target.title.text()
    if isinstance(target, Heatmap):
        return target.plot.titleLabel.text
    return target.objectName()


# --- CSV --------------------------------------------------------------------------------------
def save_csv(target: QWidget, path: str | Path) -> None:
    """Write the numbers ``target`` shows: a matrix with its token labels as headers, or for a
    plot one row per point (plot, series, x, y, value, label)."""
    if isinstance(target, (Heatmap, MatrixView)):
        rows = matrix_rows(target.values, target.row_labels, target.col_labels)
    elif isinstance(target, pg.GraphicsView):
        rows = plot_rows(target)
    else:
        raise ValueError(f"A {type(target).__name__} holds no numbers to export.")
    with open(path, "w", newline="", encoding="utf-8") as handle:
        csv.writer(handle).writerows(rows)


def matrix_rows(values: np.ndarray, row_labels, col_labels) -> list[list[str]]:
    """A header of column labels, then each row's label and its numbers (exact: repr of floats)."""
    rows = [["", *col_labels]]
    rows += [[label, *map(_number, row)] for label, row in zip(row_labels, values, strict=True)]
    return rows


def read_matrix_csv(path: str | Path) -> tuple[np.ndarray, list[str], list[str]]:
    """The inverse of a matrix CSV: (values, row_labels, col_labels)."""
    with open(path, newline="", encoding="utf-8") as handle:
        header, *body = list(csv.reader(handle))
    values = np.array([[float(v) for v in row[1:]] for row in body]).reshape(len(body), len(header) - 1)
    return values, [row[0] for row in body], header[1:]


PLOT_HEADER = ["plot", "series", "x", "y", "value", "label"]


def plot_rows(view: pg.GraphicsView) -> list[list[str]]:
    """Every data point of every plot in ``view``: curves, scatters and bars give x, y and the
    axis tick label at x (a token, when the axis is labelled with tokens); images give column,
    row and the pixel value."""
    rows = [PLOT_HEADER]
    for box in _view_boxes(view):
        plot_name = _plot_title(box)
        labels = _x_tick_labels(box)
        for k, item in enumerate(box.addedItems):
            series = item.name() if hasattr(item, "name") and item.name() else f"{type(item).__name__} {k}"
            if isinstance(item, pg.ImageItem):
                image = item.image
                if image is None or image.ndim != 2:
                    continue
                for (i, j), v in np.ndenumerate(image):
                    rows.append([plot_name, series, str(j), str(i), _number(v), ""])
                continue
            for x, y in zip(*_xy(item), strict=True):
                rows.append([plot_name, series, _number(x), _number(y), "", labels.get(float(x), "")])
    return rows


def _view_boxes(view: pg.GraphicsView) -> list[pg.ViewBox]:
    boxes = [
        item
        for item in view.scene().items()
        if isinstance(item, pg.ViewBox) and not isinstance(item.parentItem(), pg.ColorBarItem)
    ]
    return sorted(boxes, key=lambda b: (b.sceneBoundingRect().top(), b.sceneBoundingRect().left()))


def _plot_title(box: pg.ViewBox) -> str:
    parent = box.parentItem()
    return parent.titleLabel.text if isinstance(parent, pg.PlotItem) else ""


def _x_tick_labels(box: pg.ViewBox) -> dict[float, str]:
    parent = box.parentItem()
    if not isinstance(parent, pg.PlotItem):
        return {}
    levels = parent.getAxis("bottom")._tickLevels or parent.getAxis("top")._tickLevels or []
    return {float(pos): str(text) for level in levels for pos, text in level}


def _xy(item) -> tuple[np.ndarray, np.ndarray]:
    if isinstance(item, pg.BarGraphItem):
        opts = item.opts
        if np.ndim(opts.get("width")) and not np.ndim(opts.get("height")):  # horizontal: widths are values
            at, size = opts.get("y") if opts.get("y") is not None else opts.get("y0"), opts.get("width")
        else:
            at, size = opts.get("x") if opts.get("x") is not None else opts.get("x0"), opts.get("height")
        if at is None or size is None:
            return np.zeros(0), np.zeros(0)
        at, size = np.broadcast_arrays(np.asarray(at, float), np.asarray(size, float))
        return at, size
    if hasattr(item, "getData"):
        # The data as given, not as drawn: on a log axis a curve draws log10 of it.
        x, y = item.getOriginalDataset() if hasattr(item, "getOriginalDataset") else item.getData()
        if x is None or y is None:
            return np.zeros(0), np.zeros(0)
        return np.asarray(x, float), np.asarray(y, float)
    return np.zeros(0), np.zeros(0)


def _number(v) -> str:
    v = float(v)
    return repr(v) if math.isfinite(v) else ("nan" if math.isnan(v) else ("inf" if v > 0 else "-inf"))


# --- the right-click menu ---------------------------------------------------------------------
class ExportMenu(QObject):
    """Right-click on ``target`` offers Export PNG… / SVG… / CSV…"""

    def __init__(self, target: QWidget, name: str):
        super().__init__(target)
        self.target, self.name = target, name
        if isinstance(target, Heatmap):
            target.watch_viewport(self)  # its view may not be built yet
        else:
            inner = target.table if isinstance(target, MatrixView) else target
            inner.viewport().installEventFilter(self)

    def eventFilter(self, _obj, event) -> bool:
        if event.type() == QEvent.Type.ContextMenu:
            self.menu().exec(event.globalPos())
            return True
        return False

    def menu(self) -> QMenu:
        menu = QMenu(self.target)
        menu.addAction("Export PNG…", self.ask_png)
        menu.addAction("Export SVG…", lambda: self.ask(save_svg, "svg", "SVG drawing (*.svg)"))
        menu.addAction("Export CSV of the numbers…", lambda: self.ask(save_csv, "csv", "CSV table (*.csv)"))
        return menu

    def ask_png(self) -> None:
        s = settings()
        width, ok = QInputDialog.getInt(
            self.target,
            "Export PNG",
            "Image width in pixels (1920 fills a full-HD slide):",
            int(s.value("export/width", DEFAULT_WIDTH)),
            MIN_WIDTH,
            MAX_WIDTH,
            160,
        )
        if ok:
            s.setValue("export/width", width)
            self.ask(lambda t, p: save_png(t, p, width), "png", "PNG image (*.png)")

    def ask(self, save, suffix: str, kind: str) -> None:
        path = ask_save_path(self.target, f"Export {self.name}", f"{self.name}.{suffix}", kind)
        if path:
            report(self.target, lambda: save(self.target, path), path)


def ask_save_path(parent: QWidget, caption: str, name: str, kind: str) -> str:
    """A save dialog that starts in the folder used last; "" when cancelled."""
    s = settings()
    folder = Path(str(s.value("export/folder", Path.home())))
    path, _ = QFileDialog.getSaveFileName(parent, caption, str(folder / _safe(name)), kind)
    if path:
        s.setValue("export/folder", str(Path(path).parent))
    return path


def report(widget: QWidget, job, path: str) -> None:
    """Run an export and say in the window's status bar whether it worked."""
    bar = widget.window().statusBar() if hasattr(widget.window(), "statusBar") else None
    try:
        job()
    except (OSError, ValueError) as exc:
        message = f"Export failed: {exc}"
    else:
        message = f"Saved {path}"
    if bar is not None:
        bar.showMessage(message, 8000)


def _safe(name: str) -> str:
    return "".join(c if c.isalnum() or c in "-_." else "-" for c in name).strip("-") or "view"


def attach_exports(root: QWidget, names: Mapping[str, QWidget] | None = None, prefix: str = "") -> int:
    """Give every exportable view under ``root`` its right-click menu (once); returns how many
    views have one. ``names`` ({name: view}, e.g. a panel's export()) names the files."""
    by_id = {id(w): n for n, w in (names or {}).items()}
    targets = export_targets(root)
    for number, target in enumerate(targets, 1):
        if target.property(MENU_PROPERTY):
            continue
        name = by_id.get(id(target)) or target.objectName() or f"view-{number}"
        target.setProperty(MENU_PROPERTY, True)
        ExportMenu(target, f"{prefix}{name}")
    return len(targets)
