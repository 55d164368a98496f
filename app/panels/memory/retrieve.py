"""Steps 1–3: store and corrupt, classical sign updates, one modern (attention) step, side by side."""

from __future__ import annotations

import numpy as np
from PySide6.QtCore import QSize
from PySide6.QtWidgets import QHBoxLayout, QVBoxLayout, QWidget

from app.panels.memory.state import MemoryResult, N
from app.panels.step import Live, Notice, Step
from app.widgets.pattern_grid import PatternGrid
from app.widgets.text import note
from app.widgets.weight_bars import WeightBars
from core.maths.explain import num
from core.maths.hopfield import MAX_STEPS, Comparison, Outcome

SHOWN = 10  # stored patterns drawn as pictures; the rest are counted
PATH_PICTURES = 8  # classical states drawn: the first ones and the final one
COLUMN_CHARS = 24  # each network's column is at least this many average characters wide


def pattern_level(c: Comparison) -> float:
    """The colour range of the modern patterns: 1 for ±1 patterns."""
    return float(np.quantile(np.abs(c.modern_patterns), 0.95))


def _mark(ok: bool) -> str:
    return '<span style="color:#1a7f37">✔</span>' if ok else '<span style="color:#c62828">✘</span>'


def classical_text(c: Comparison) -> str:
    v, r = c.classical_verdict, c.classical
    ok = v.outcome is Outcome.RECOVERED
    if not r.converged[0]:
        return f"{_mark(False)} still changing after {MAX_STEPS} updates (a cycle): no resting state."
    where = "" if ok else f" Nearest stored pattern: #{v.nearest} (cosine {num(v.similarity[v.nearest])})."
    updates = f"{r.steps} update" + ("" if r.steps == 1 else "s")
    return f"{_mark(ok)} {v.outcome.value.capitalize()} after {updates}.{where}"


def modern_text(c: Comparison) -> str:
    v, w = c.modern_verdict, c.modern.weights[0]
    ok = v.outcome is Outcome.RECOVERED
    top = int(np.argmax(w))
    error = float(np.max(np.abs(c.modern.output[0] - c.modern_patterns[c.target])))
    return (
        f"{_mark(ok)} {v.outcome.value.capitalize()} in one step: the largest weight is "
        f"{num(w[top], 3)} on #{top}; the worst entry is {num(error, 3)} away from the target "
        "(recovered means within 0.3 everywhere)."
    )


class RetrieveView(QWidget):
    """The classical network beside the modern one for one query: stored patterns, the path of
    states, the verdicts, and the modern weights."""

    def __init__(self, caption: str = ""):
        super().__init__()
        self.classical_stored = PatternGrid("Stored (Hebbian weights)")
        self.classical_path = PatternGrid("Query, then the state after each update")
        self.classical_verdict = note(rich=True)
        self.modern_stored = PatternGrid("Stored (keys = values)")
        self.modern_path = PatternGrid("Query → one step → target")
        self.modern_bars = WeightBars("weights softmax(β·X·q)", "stored pattern")
        self.modern_verdict = note(rich=True)
        columns = QHBoxLayout()
        for heading, stored, path, extra, verdict in (
            ("<b>Classical Hopfield</b>: sign(W·s) until nothing changes", self.classical_stored,
             self.classical_path, None, self.classical_verdict),
            ("<b>Modern Hopfield</b>: Xᵀ·softmax(β·X·query), once", self.modern_stored, self.modern_path,
             self.modern_bars, self.modern_verdict),
        ):  # fmt: skip
            column = QVBoxLayout()
            column.addWidget(note(heading, rich=True))
            column.addWidget(stored, 2)
            column.addWidget(path, 2)
            column.addWidget(verdict)
            if extra is not None:
                column.addWidget(extra, 3)
            else:
                column.addStretch(3)
            columns.addLayout(column, 1)
        self.retrieve_note = note(rich=True)
        layout = QVBoxLayout(self)
        if caption:
            layout.addWidget(note(caption, rich=True))
        layout.addWidget(self.retrieve_note)
        layout.addLayout(columns, 1)

    def minimumSizeHint(self) -> QSize:
        """Two columns of COLUMN_CHARS characters: narrower, their notes and captions wrap onto more
        lines than the page has height for."""
        hint = super().minimumSizeHint()
        return hint.expandedTo(QSize(2 * COLUMN_CHARS * self.fontMetrics().averageCharWidth(), 0))

    def show_result(self, r: MemoryResult) -> None:
        c, s, t = r.comparison, r.state, r.comparison.target
        m_c, m_m = c.classical_patterns.shape[0], c.modern_patterns.shape[0]
        level = pattern_level(c)
        self._show_stored(self.classical_stored, c.classical_patterns, t, "±1 patterns")
        self._show_stored(self.modern_stored, c.modern_patterns, t, "patterns", level)
        states = c.classical.states[:, 0]  # (steps + 1, N)
        picks = list(range(min(len(states), PATH_PICTURES)))
        if len(states) > PATH_PICTURES:
            picks[-1] = len(states) - 1
        captions = ["query" if k == 0 else str(k) for k in picks]
        self.classical_path.set_patterns(
            np.vstack([states[picks], c.classical_patterns[t]]), [*captions, "target"]
        )
        self.modern_path.set_patterns(
            np.vstack([c.modern_query, c.modern.output[0], c.modern_patterns[t]]),
            ["query", "output", "target"],
            levels=(-level, level),
        )
        self.modern_bars.set_weights(c.modern.weights[0], t)
        self.classical_verdict.setText(classical_text(c))
        self.modern_verdict.setText(modern_text(c))
        source = "the article's draws (seed 0 reproduces it)" if s.source == "article" else f"seed {s.seed}"
        if s.source == "article":
            corruption = "6 flipped pixels (classical) / noise σ = 0.3 added (modern)"
        else:
            noise = f" and noise σ = {num(s.noise)}" if s.noise > 0 else ""
            corruption = f"{s.flips} flipped pixels{noise}"
        self.retrieve_note.setText(
            f"Query: stored pattern #{t} with {corruption}; {source}. "
            f"The classical network holds {m_c} ±1 patterns in a {N} × {N} weight matrix; "
            f"the modern one keeps all {m_m} patterns and compares the query with each."
        )

    @staticmethod
    def _show_stored(
        grid: PatternGrid, patterns: np.ndarray, target: int, kind: str, level: float = 1.0
    ) -> None:
        m = patterns.shape[0]
        shown = min(m, SHOWN)
        grid.set_title(f"{m} stored {kind}" + (f" (first {shown} drawn)" if m > shown else ""))
        grid.set_patterns(patterns[:shown], [f"#{i}" for i in range(shown)], (-level, level), target)


class RetrievePage(Step):
    """The student's query, both networks (one page for the first three steps)."""

    def __init__(self, live: Live):
        super().__init__(live)
        self.view = RetrieveView()
        self.layout_with(None, None, self.view, flush=True)

    def views(self) -> dict[str, QWidget]:
        return {
            "classical_stored": self.view.classical_stored,
            "classical_path": self.view.classical_path,
            "modern_path": self.view.modern_path,
            "weights": self.view.modern_bars.plot,
        }

    def draw(self, r: MemoryResult) -> Notice:
        self.view.show_result(r)
        return None
