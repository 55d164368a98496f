"""Attention Lab's desktop app: PySide6 + pyqtgraph views over ``core``."""
