"""Steps 1–3 (Tokens, Head view, Model view): one page over the view state that every step
walks through. The options row re-expresses the model's weights (in the worker); the tabs show
one head as a heatmap, one layer's heads as lines and every head as small tiles; the side column
holds step 4's Find a head and step 5's Patterns. Choosing a layer or head only redraws."""

from __future__ import annotations

from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QHBoxLayout,
    QLabel,
    QPushButton,
    QSpinBox,
    QTabWidget,
    QVBoxLayout,
    QWidget,
)

from app.panels.binding import set_quietly
from app.panels.model.find_head import FindBox
from app.panels.model.patterns import PatternBox
from app.panels.model.state import ALL_PARTS, Shown, cut_notice, describe_cell
from app.panels.step import Live, Notice, Step
from app.widgets import Heatmap
from app.widgets.attention_lines import AttentionLines
from app.widgets.head_grid import HeadGrid
from app.widgets.reflow_grid import ReflowGrid
from app.widgets.side_column import side_column
from core.maths.head_analysis import PAIR_PARTS


class AttentionPage(Step):
    def __init__(self, live: Live):
        super().__init__(live)
        self.layer = self.head = 0  # the head shown, 0-based (the spin boxes count from 1)
        self.undrawn_tabs: set[QWidget] = set()  # tabs not drawn since the result or layer changed
        self.note = ""  # said once with the next view (e.g. why the bundled model was loaded)
        self.words_box = self.bind(QCheckBox("join pieces into words"), "words")
        self.special_box = self.bind(QCheckBox("hide [CLS]/[SEP]"), "hide_special")
        self.rescale_box = self.bind(QCheckBox("rescale rows"), "rescale")
        self.rescale_box.setToolTip("after hiding, divide each row by what is left so it sums to 1")
        self.part_combo = QComboBox()
        self.part_combo.addItems([ALL_PARTS, *PAIR_PARTS])
        self.bind(self.part_combo, "part")
        self.part_combo.setToolTip("with two sentences: keep only the weights from one into the other")
        self.layer_spin, self.head_spin = QSpinBox(), QSpinBox()
        for spin in (self.layer_spin, self.head_spin):
            spin.setRange(1, 1)
        boxes = (self.words_box, self.special_box, self.rescale_box)
        self.inside_button = QPushButton("Inside this head…")
        self.inside_button.setToolTip("this head in the Inside a head panel: its real q and k, step by step")
        pick = (QLabel("Pair"), self.part_combo, QLabel("Layer"), self.layer_spin)
        pick += (QLabel("Head"), self.head_spin, self.inside_button)
        # takes the spare room; a label, so the controls' saved paths (QWidget0 is the side column) hold
        filler = QLabel()
        wide = [(w, 0, k, 1) for k, w in enumerate((*boxes, *pick[:2], filler, *pick[2:]))]
        narrow = [(box, 0, 2 * k, 2) for k, box in enumerate(boxes)]  # large text: two rows
        narrow += [(w, 1, k, 1) for k, w in enumerate(pick)] + [(filler, 0, 6, 1)]
        options = ReflowGrid(wide, narrow, stretch=(5, 6))

        self.lines = AttentionLines()
        self.grid = HeadGrid()
        self.heatmap = Heatmap("", signed=False)
        self.heatmap.set_describer(lambda i, j: describe_cell(self.result, self.layer, self.head, i, j))
        self.tabs = QTabWidget()
        self.tabs.addTab(self.lines, "Head view")
        self.tabs.addTab(self.grid, "Model view")
        self.tabs.addTab(self.heatmap, "Heatmap")
        self.finder, self.patterns = FindBox(), PatternBox()
        side = QVBoxLayout()
        side.addWidget(self.finder, 1)
        side.addWidget(self.patterns)
        row = QHBoxLayout()
        row.addWidget(self.tabs, 1)
        row.addWidget(side_column(side))
        self.layout_with(None, options, row, on_top=True, flush=True)

        self._enable_options()
        live.changed.connect(self._enable_options)
        self.special_box.toggled.connect(self.rescale_box.setEnabled)
        self.tabs.currentChanged.connect(lambda _index: self.draw_tab())
        self.layer_spin.valueChanged.connect(lambda v: self.select_head(v - 1, self.head))
        self.head_spin.valueChanged.connect(lambda v: self.select_head(self.layer, v - 1))
        self.grid.clicked.connect(lambda layer, head: self.jump(layer, head, self.heatmap))
        self.finder.jump.connect(self._found)
        self.patterns.jump.connect(lambda layer, head: self.jump(layer, head, self.lines))

    def views(self) -> dict[str, QWidget]:
        return {"head_view": self.lines.view, "model_view": self.grid.view, "heatmap": self.heatmap}

    def _enable_options(self) -> None:
        s = self.live.wanted
        self.rescale_box.setEnabled(s.hide_special)
        self.part_combo.setEnabled(s.raw is not None and s.raw.is_pair)

    def draw(self, shown: Shown) -> Notice:
        a = shown.attention
        n_layers, n_heads = a.shape[:2]
        self.layer, self.head = min(self.layer, n_layers - 1), min(self.head, n_heads - 1)
        for spin, top in ((self.layer_spin, n_layers), (self.head_spin, n_heads)):
            set_quietly(spin, min(spin.value(), top))  # inside the new range, so setRange changes nothing
            spin.setRange(1, top)
        self.lines.set_head_count(n_heads)  # its chips are controls (lessons set them) even while hidden
        self.undrawn_tabs = {self.lines, self.grid}  # drawn when on screen: a hidden tab costs nothing
        self.select_head(self.layer, self.head)
        self.finder.show_tokens(a, shown.state.part)
        self.patterns.show_rankings(shown.patterns)
        notes = [text for text in (self.note, cut_notice(shown.state.raw)) if text]
        self.note = ""
        return (" ".join(notes), "warning") if notes else None

    def select_head(self, layer: int, head: int) -> None:
        """Show head (layer, head), 0-based, in every view."""
        if self.result is None:
            return
        a = self.result.attention
        n_layers, n_heads = a.shape[:2]
        layer, head = min(max(layer, 0), n_layers - 1), min(max(head, 0), n_heads - 1)
        if layer != self.layer:
            self.undrawn_tabs.add(self.lines)
        self.layer, self.head = layer, head
        set_quietly(self.layer_spin, layer + 1)
        set_quietly(self.head_spin, head + 1)
        if self.grid not in self.undrawn_tabs:
            self.grid.select(layer, head)
        self.heatmap.set_title(f"layer {layer + 1}, head {head + 1}")
        self.heatmap.set_data(a.attentions[layer, head], a.labels, a.labels, levels=(0.0, 1.0))
        self.draw_tab()

    def draw_tab(self, view: QWidget | None = None) -> None:
        """Draw ``view`` (the tab on screen by default) if the result or the layer changed since
        it was last drawn."""
        view = view or self.tabs.currentWidget()
        if view not in self.undrawn_tabs or self.result is None:
            return
        self.undrawn_tabs.discard(view)
        if view is self.lines:
            a = self.result.attention
            self.lines.set_data(a.attentions[self.layer], a.labels)
        else:
            self.grid.set_data(self.result.tiles)
            self.grid.select(self.layer, self.head)

    def jump(self, layer: int, head: int, view: QWidget) -> None:
        """Show head (layer, head) alone in ``view`` (a tab)."""
        self.select_head(layer, head)
        self.draw_tab(self.lines)  # it must have the layer's heads before one is picked
        self.lines.set_visible_heads({head})
        self.tabs.setCurrentWidget(view)

    def _found(self, layer: int, head: int, i: int, j: int) -> None:
        self.jump(layer, head, self.heatmap)
        self.heatmap.mark(i, j)

    def show_pattern(self, key: str) -> None:
        """Jump to the head that scores highest on pattern ``key``; say why when none can."""
        why = self.patterns.pick(key)
        if why:
            self.tell(why)
