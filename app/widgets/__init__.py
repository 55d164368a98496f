"""Shared views reused by every panel: one implementation each."""

from app.widgets.heatmap import Heatmap
from app.widgets.matrix_view import MatrixView
from app.widgets.message_bar import MessageBar
from app.widgets.sliders import LabelledSlider

__all__ = ["Heatmap", "LabelledSlider", "MatrixView", "MessageBar"]
