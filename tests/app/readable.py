"""What a test asks of a row of widgets: that each shows something a user can read."""

from __future__ import annotations


def blank_beside(button) -> list[str]:
    """The widgets in ``button``'s row that show nothing a user can read: a progress bar with no
    text, a text field with neither text nor a placeholder."""
    from PySide6.QtCore import Qt
    from PySide6.QtWidgets import QLineEdit, QProgressBar, QWidget

    parent, row = button.parentWidget(), button.geometry()
    blank = []
    for w in parent.findChildren(QWidget, options=Qt.FindChildOption.FindDirectChildrenOnly):
        if w is button or not w.isVisibleTo(parent):
            continue
        if w.geometry().top() > row.bottom() or w.geometry().bottom() < row.top():
            continue
        if isinstance(w, QProgressBar) and not w.text().strip():
            blank.append(f"an empty progress bar at x = {w.x()}")
        elif isinstance(w, QLineEdit) and not (w.text() or w.placeholderText()).strip():
            blank.append(f"an empty text field at x = {w.x()}")
    return blank
