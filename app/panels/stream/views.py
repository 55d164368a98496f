"""What the residual stream panel's pages share: the colours, and the page of steps 1–3 (the prompt
across the page, the token followed at the top of the control column)."""

from __future__ import annotations

from PySide6.QtWidgets import QFormLayout, QHBoxLayout, QLineEdit, QWidget

from app.panels.step import Live, Step
from app.widgets.spin_boxes import spin

MOST = 10_000  # tokens or layers: the model refuses what it does not have, with a message
PENS = {"leaving": "#3d7bd9", "attention adds": "#ff8c00", "MLP adds": "#2ca02c"}
Row = tuple[str, QWidget]  # a label and its control
View = tuple[QWidget, int]  # a view and its share of the row's width


class TokenStep(Step):
    """A page of steps 1–3: ``prompt`` and ``position`` (the token, from 1; 0 reads "last") bound
    to the shared state, placed by ``controls`` and ``wide``."""

    def __init__(self, live: Live):
        super().__init__(live)
        self.prompt = self.bind(QLineEdit(self.state.prompt), "prompt")
        self.position = self.bind(spin(self.state.position, 0, MOST), "position")
        self.position.setSpecialValueText("last")

    def controls(self, *rows: Row) -> QFormLayout:
        """The side column's form: the token, then ``rows``."""
        form = QFormLayout()
        for label, control in (("Token", self.position), *rows):
            form.addRow(label, control)
        return form

    @property
    def wide(self) -> tuple[Row, ...]:
        """The rows across the page: the prompt."""
        return (("Prompt", self.prompt),)


def in_a_row(*views: View) -> QWidget:
    """``views`` side by side, each with its share of the width."""
    row = QHBoxLayout()
    for view, stretch in views:
        row.addWidget(view, stretch)
    holder = QWidget()
    holder.setLayout(row)
    return holder
