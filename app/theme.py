"""Light and dark themes, and the plot styling that follows the theme and the font scale."""

from __future__ import annotations

import pyqtgraph as pg
from PySide6.QtCore import Qt
from PySide6.QtGui import QColor, QPalette
from PySide6.QtWidgets import QApplication, QGraphicsSimpleTextItem, QGraphicsView, QWidget

THEMES = ("system", "light", "dark")


def is_dark(name: str) -> bool:
    if name == "system":
        return QApplication.styleHints().colorScheme() == Qt.ColorScheme.Dark
    return name == "dark"


def dark_palette() -> QPalette:
    p = QPalette()
    roles = QPalette.ColorRole
    for role, color in {
        roles.Window: "#2b2d30",
        roles.WindowText: "#e6e6e6",
        roles.Base: "#1f2023",
        roles.AlternateBase: "#2b2d30",
        roles.Text: "#e6e6e6",
        roles.Button: "#35373b",
        roles.ButtonText: "#e6e6e6",
        roles.Highlight: "#3d7bd9",
        roles.HighlightedText: "#ffffff",
        roles.ToolTipBase: "#35373b",
        roles.ToolTipText: "#e6e6e6",
        roles.Link: "#7fb0ff",
        roles.PlaceholderText: "#9a9a9a",
    }.items():
        p.setColor(role, QColor(color))
    p.setColor(QPalette.ColorGroup.Disabled, roles.Text, QColor("#7a7a7a"))
    p.setColor(QPalette.ColorGroup.Disabled, roles.ButtonText, QColor("#7a7a7a"))
    return p


def apply_theme(app: QApplication, name: str) -> None:
    """Set the Fusion style with a light or dark palette ("system" follows the desktop)."""
    if name not in THEMES:
        raise ValueError(f"Unknown theme {name!r}; choose one of {', '.join(THEMES)}.")
    if app.style().name().lower() != "fusion":  # setting it again re-polishes every widget for nothing
        app.setStyle("Fusion")
    app.setPalette(dark_palette() if is_dark(name) else app.style().standardPalette())


def style_plots(root: QWidget) -> None:
    """Give every pyqtgraph view under ``root`` the application's palette colours and font."""
    from app.widgets.plots import PlotRoom  # here: the plots module's widgets import this one

    palette, font = QApplication.palette(), QApplication.font()
    background = palette.color(QPalette.ColorRole.Base)
    foreground = palette.color(QPalette.ColorRole.Text)
    for view in root.findChildren(QGraphicsView):
        if not isinstance(view, pg.GraphicsView):
            continue
        view.setBackground(background)
        for item in view.scene().items():
            if isinstance(item, pg.AxisItem):
                item.setPen(foreground)
                item.setTextPen(foreground)
                item.setStyle(tickFont=font)
                item.label.setFont(font)
            elif isinstance(item, pg.LabelItem):
                item.setText(item.text, color=foreground, size=f"{font.pointSizeF():.1f}pt")
            elif isinstance(item, pg.TextItem):
                item.setFont(font)
            elif isinstance(item, QGraphicsSimpleTextItem):  # captions drawn in data units
                item.setBrush(foreground)
        room = view.findChild(PlotRoom)
        if room is not None:  # the new font's labels may need more room than the last fit gave
            room.fit()
