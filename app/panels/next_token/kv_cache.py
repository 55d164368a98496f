"""Step 4: the KV cache: what each layer holds, its size from the real config beside full
multi-head attention, and a decode step timed with and without it."""

from __future__ import annotations

import pyqtgraph as pg
from PySide6.QtWidgets import QPushButton, QVBoxLayout, QWidget

from app.panels.next_token import scripts
from app.panels.next_token.state import context_notice
from app.panels.next_token.writing import Writing
from app.panels.scripts import Script
from app.panels.step import Notice, Step
from app.widgets import Heatmap
from app.widgets.plots import legend_lines, plot
from app.widgets.text import note
from core.decoder.windows import window_sentence
from core.interp.decode_timing import DecodeTiming
from core.interp.kv_cache import LET_GO, CacheSize, cache_size, kept_cells, size_curve
from core.interp.token_text import visible
from core.printing import counted


def human_bytes(n: float) -> str:
    for unit in ("B", "KiB", "MiB", "GiB"):
        if n < 1024 or unit == "GiB":
            return f"{n:,.0f} {unit}" if unit == "B" else f"{n:,.1f} {unit}"
        n /= 1024
    raise AssertionError("unreachable")


class CachePage(Step):
    """Step 2's settings (not drawn here) say how the appended tokens were drawn, for the
    exported script."""

    def __init__(self, writing: Writing):
        super().__init__(writing.text)
        self.settings = writing.sampling
        self.timed = self.follow(writing.timing)  # the last decode step timed
        self.cache_map = Heatmap(
            "KV cache: what every layer keeps",
            colorbar=False,
            cell_text=False,
            rows="layer",
            cols="cached token",
        )
        self.size_plot = plot("KV cache size (float32)", "tokens", "MiB")
        self.size_plot.addLegend(offset=(10, 10))
        self.gqa_line = self.size_plot.plot(
            pen=pg.mkPen("#3d7bd9", width=2), name="this model (shared key/value heads)"
        )
        legend_lines(self.size_plot, self.gqa_line, "this model", "(shared key/value heads)")
        self.full_line = self.size_plot.plot(
            pen=pg.mkPen("#ff8c00", width=2, style=pg.QtCore.Qt.PenStyle.DashLine), name="full multi-head"
        )
        self.now_marker = pg.ScatterPlotItem(size=9, brush="#3d7bd9", pen=None)
        self.size_plot.addItem(self.now_marker)
        self.sizes = note()
        self.work = note()
        self.measure_button = QPushButton("Time one decode step")
        self.timing = note(
            "Press the button to time one step at the current length, with and without the cache."
        )
        controls = QVBoxLayout()
        controls.addWidget(self.measure_button)
        controls.addWidget(self.timing)
        views = QVBoxLayout()
        views.addWidget(self.cache_map, 3)
        views.addWidget(self.size_plot, 2)
        self.layout_with(None, controls, views, notes=(self.work, self.sizes))
        self.measure_button.clicked.connect(writing.measure)

    def views(self) -> dict[str, QWidget]:
        return {"kv cache": self.cache_map, "kv cache size": self.size_plot}

    def script(self) -> Script:
        return scripts.kv_cache(self.state.run, self.result, self.settings.state)

    def draw(self, g) -> Notice:
        m = g.model
        n, t = g.length, len(g.prompt.ids)
        size = cache_size(m, n)
        cells = kept_cells(size, t)
        pieces = [*g.prompt.pieces, *(c.piece for c in g.chosen)]
        rows = [f"{i + 1} sliding" if i in m.sliding else str(i + 1) for i in range(m.n_layers)]
        self.cache_map.set_data(cells, rows, [visible(p) for p in pieces], levels=(0.0, 1.0))
        self.cache_map.set_describer(
            lambda i, j: (
                f"let go: outside this layer's window of {m.window}"
                if cells[i, j] == LET_GO
                else "from the prompt (prefill)"
                if j < t
                else f"from decode step {j - t + 1}"
            )
        )
        self._plot_sizes(m, size)
        step = (
            "the last decode step computed 1 × " + f"{n} weights per head"
            if g.chosen
            else "no decode step yet"
        )
        self.work.setText(
            f"The prefill read the {t} prompt tokens at once: {t} × {t} weights per head. Each decode "
            f"step adds one token, whose single query row meets every cached key: {step}. Every layer "
            "keeps its own keys and values: light cells came from the prompt, darker ones from decode steps."
        )
        windows = (
            f" {window_sentence(m.name, m.window, m.sliding, m.n_layers)} A sliding layer keeps only "
            f"the last {m.window - 1:,} tokens, so beyond that its share of the cache stops growing."
            if m.window
            else ""
        )
        self.sizes.setText(
            f"Per token: 2 (keys and values) × {m.n_layers} layers × "
            f"{counted(m.n_kv_heads, 'key/value head')} × "
            f"{m.head_dim} values × 4 bytes = {human_bytes(size.per_token)}. At {n} tokens the cache holds "
            f"{human_bytes(size.total)}; "
            + (
                f"with a key/value head per query head ({m.n_heads}) it would hold "
                f"{human_bytes(size.total_full)}, {size.saving:g}× as much."
                if size.saving > 1
                else "every query head has its own key/value head here, so nothing is shared: a saving of 1×."
            )
            + windows
        )
        if self.timed.result is not None:
            self.show_timing(self.timed.result)
        return context_notice(g)

    def _plot_sizes(self, model, size: CacheSize) -> None:
        lengths, mib = size_curve(model)
        self.gqa_line.setData(lengths, mib[:, 0])
        self.full_line.setData(lengths, mib[:, 1])
        self.now_marker.setData([size.tokens], [size.total / 2**20])

    def show_timing(self, timing: DecodeTiming) -> None:
        self.timing.setText(
            f"At {timing.tokens} tokens: one step with the cache {1000 * timing.cached:.1f} ms, "
            f"running all {timing.tokens} tokens again {1000 * timing.uncached:.1f} ms "
            f"({timing.speedup:.1f}× slower), medians of 5."
        )
