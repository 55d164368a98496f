"""Step 3: the heads' outputs side by side (concat), and W_O mixing them back into d_model features."""

from __future__ import annotations

from PySide6.QtCore import QRectF
from PySide6.QtGui import QPen
from PySide6.QtWidgets import QGraphicsRectItem, QGridLayout, QWidget

from app.panels.multihead import scripts
from app.panels.multihead.side_by_side import head_color
from app.panels.multihead.state import MultiHeadResult
from app.panels.scripts import Script
from app.panels.step import Live, Notice, Step
from app.widgets import Heatmap
from app.widgets.text import note, scrolling
from core.maths import explain


class JoinPage(Step):
    def __init__(self, live: Live):
        super().__init__(live)
        self.concat_blocks: list[QGraphicsRectItem] = []
        self.w_o_blocks: list[QGraphicsRectItem] = []
        self.caption = note(
            "Each head hands back an n × d_k block. The blocks are laid side by side, head 0 first, and "
            "W_O mixes them back into the model's d_model features."
        )
        self.shapes_label = note()
        self.concat_map = Heatmap("concat", signed=True, colorbar=False, cell_text=False)
        self.w_o_map = Heatmap("W_O", signed=True, colorbar=False, cell_text=False)
        self.output_map = Heatmap("output", signed=True, colorbar=False, cell_text=False)
        self.concat_map.set_describer(self._describe_concat)
        self.output_map.set_describer(self._describe_output)
        # The product laid out as it is worked by hand: W_O above the result, concat to its left,
        # so each output cell lines up with the row of concat and the column of W_O that make it.
        product = QGridLayout()
        product.addWidget(self.w_o_map, 0, 1)
        product.addWidget(self.concat_map, 1, 0)
        product.addWidget(self.output_map, 1, 1)
        product.setRowStretch(0, 3)
        product.setRowStretch(1, 2)
        self.legend = note()
        self.cost_note = note()
        product.addWidget(scrolling(self.shapes_label, self.legend, self.cost_note), 0, 0)
        self.layout_with(self.caption, None, product, flush=True)

    def views(self) -> dict[str, QWidget]:
        return {"concat": self.concat_map, "W_O": self.w_o_map, "output": self.output_map}

    @staticmethod
    def _block(heatmap: Heatmap, blocks: list[QGraphicsRectItem], i: int) -> QGraphicsRectItem:
        while len(blocks) <= i:
            item = QGraphicsRectItem()
            item.setZValue(8)
            heatmap.plot.addItem(item)
            blocks.append(item)
        return blocks[i]

    def script(self) -> Script:
        return scripts.join(self.state)

    def draw(self, r: MultiHeadResult) -> Notice:
        t, tokens = r.trace, r.tokens
        n, h, d_model, d_k = len(tokens), len(t.heads), r.W_O.shape[0], r.d_k
        features = [str(k) for k in range(d_model)]
        self.concat_map.set_data(t.concat, tokens, features)
        if self.w_o_map.values is not r.W_O:  # unchanged by the temperature and the mask
            self.w_o_map.set_data(r.W_O, features, features)
        self.output_map.set_data(t.output, tokens, features)
        self.concat_map.set_title(f"concat  ({n} × {h}·{d_k} = {n} × {d_model})")
        self.w_o_map.set_title(f"W_O  ({d_model} × {d_model})")
        self.output_map.set_title(f"output  ({n} × {d_model})")
        self.shapes_label.setText(
            f"{h} head output{'s' if h > 1 else ''} of {n} × {d_k}, side by side → concat {n} × {d_model}; "
            f"concat · W_O ({d_model} × {d_model}) → output {n} × {d_model}, the same shape as X. "
            "Blue is negative, red positive; hover a cell for its value."
        )
        legend = []
        for i in range(max(h, len(self.concat_blocks))):
            shown = i < h
            color = head_color(i, h)
            for heatmap, blocks, rect in (
                (self.concat_map, self.concat_blocks, QRectF(i * d_k, 0, d_k, n)),
                (self.w_o_map, self.w_o_blocks, QRectF(0, i * d_k, d_model, d_k)),
            ):
                item = self._block(heatmap, blocks, i)
                item.setVisible(shown)
                if shown:
                    pen = QPen(color, 3)
                    pen.setCosmetic(True)
                    item.setPen(pen)
                    item.setRect(rect)
            if shown:
                swatch = f"<span style='color:{color.name()}'>■ head {i}</span>"
                legend.append(f"{swatch}: columns {i * d_k}–{(i + 1) * d_k - 1}")
        self.legend.setText(
            "Blocks of concat, and the rows of W_O that read them: " + ", ".join(legend) + "."
        )
        one, split = r.one, r.split
        self.cost_note.setText(
            f"Work at n = {n}: 1 head of width {d_model} needs {one.flops['total']:,} FLOPs of matrix "
            f"products; {h} heads of width {d_k} need {split.flops['total']:,}. Splitting reshapes the "
            f"work without adding to it. Only the softmax runs per head: {one.exponentials:,} "
            f"exponentials for one head, {split.exponentials:,} for {h}."
        )
        return None

    def _describe_concat(self, i: int, j: int) -> str:
        head, k = divmod(j, self.result.d_k)
        return f"output of head {head}, feature {k}, for “{self.result.tokens[i]}”"

    def _describe_output(self, i: int, j: int) -> str:
        r = self.result
        return f"concat[{r.tokens[i]}] · W_O[:, {j}] = " + explain.dot_terms(
            r.trace.concat[i], r.W_O[:, j], digits=3
        )
