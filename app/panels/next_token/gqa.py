"""Step 5: grouped-query attention: which query heads share a key/value head, and the weights of
heads that share keys side by side."""

from __future__ import annotations

from PySide6.QtWidgets import QFormLayout, QHBoxLayout, QSpinBox, QVBoxLayout, QWidget

from app.panels.next_token.view import Snapshot
from app.widgets.controls import note
from app.widgets.head_grid import HeadGrid
from core.decoder import query_groups


class GroupsPage(QWidget):
    def __init__(self):
        super().__init__()
        self.layer_spin = QSpinBox()
        self.layer_spin.setRange(1, 1)
        self.groups = note(rich=True)
        self.grid = HeadGrid()
        form = QFormLayout()
        form.addRow("Layer", self.layer_spin)
        left = QVBoxLayout()
        left.addLayout(form)
        left.addWidget(self.groups)
        left.addStretch(1)
        holder = QWidget()
        holder.setLayout(left)
        holder.setMaximumWidth(360)
        row = QHBoxLayout(self)
        row.addWidget(holder)
        row.addWidget(self.grid, 1)
        self.snapshot: Snapshot | None = None
        self.layer_spin.valueChanged.connect(lambda _: self.show(self.snapshot))

    def show(self, snap: Snapshot | None) -> None:
        self.snapshot = snap
        if snap is None:
            return
        m = snap.model
        self.layer_spin.setMaximum(m.n_layers)
        layer = self.layer_spin.value() - 1
        groups = query_groups(m.n_heads, m.n_kv_heads)
        weights = snap.generation.prompt.attentions[layer]  # (H, T, T)
        self.grid.set_data(weights[groups])  # (kv heads, query heads per kv head, T, T)
        lines = [
            f"Key/value head {g + 1} ← query heads {', '.join(str(h + 1) for h in heads)}"
            for g, heads in enumerate(groups)
        ]
        size = len(groups[0])
        how = (
            f"{m.n_heads} query heads share {m.n_kv_heads} key/value heads, {size} each: one row of the "
            "grid per key/value head. Heads in a row compare their own queries with the same keys, "
            "yet they can still look at different tokens."
            if size > 1
            else "Every query head has its own keys and values here: plain multi-head attention."
        )
        self.groups.setText(f"Layer {layer + 1}, prompt weights. {how}<br>" + "<br>".join(lines))
