"""Step 2: rank every head by how much knocking it out alone lowers the target's logit difference,
beside the ranking by attention weight. Asked for by a box in the state (``ranked``); the ranking
runs with the step's Live in the worker, with progress and cancel."""

from __future__ import annotations

import numpy as np
from PySide6.QtWidgets import QCheckBox, QFormLayout, QHBoxLayout, QLineEdit, QPushButton, QWidget

from app.panels.inside_decoder import scripts
from app.panels.inside_decoder.state import KnockResult
from app.panels.inside_decoder.views import (
    HeadMap,
    first_token_box,
    first_token_note,
    toggle_on_click,
    visible,
)
from app.panels.scripts import Script
from app.panels.step import Live, Notice, Step
from app.widgets.progress import RunProgress, show_runs
from app.widgets.text import note
from core.maths.head_analysis import HeadRanking

LISTED = 5  # heads named under each map


def top_list(ranking: HeadRanking, unit: str) -> str:
    return "<br>".join(f"{k}. layer {h.layer + 1}, head {h.head + 1}: {h.score:.2f}{unit}"
                       for k, h in enumerate(ranking.ranked(LISTED), 1))  # fmt: skip


class RankPage(Step):
    def __init__(self, live: Live):
        super().__init__(live)
        s = self.state
        self.target = self.bind(QLineEdit(s.target), "target")
        self.foil = self.bind(QLineEdit(s.foil), "foil")
        self.first = first_token_box(self)
        self.first_note = first_token_note()
        self.ranked = self.bind(QCheckBox("Rank all heads (knock each out)"), "ranked")
        self.cancel_button = QPushButton("Cancel")
        self.progress = RunProgress(
            "not ranked",
            "layer %v of %m",
            "all ranked",
            "stopped",
            "out of date",
            what="the knock-out runs, one per layer, that fill the map of drops",
        )
        self.inside_button = QPushButton("Inside the top head…")
        self.inside_button.setToolTip("the head ranked first here, in the Inside a head panel")
        self.by_effect = note(rich=True)
        self.by_weight = note(rich=True)
        controls = QFormLayout()
        controls.addRow("Target", self.target)
        controls.addRow("Foil", self.foil)
        controls.addRow(self.first)
        controls.addRow(self.ranked)
        controls.addRow(self.progress, self.cancel_button)
        controls.addRow(self.inside_button)
        self.effect_map = HeadMap("Drop in logit difference", signed=True)
        self.weight_map = HeadMap("Last token's weight on the target")
        row = QHBoxLayout()
        row.addWidget(self.effect_map)
        row.addWidget(self.weight_map)
        views = QWidget()
        views.setLayout(row)
        self.layout_with(
            "The score of a head is how much knocking it out alone lowers logit(target) − "
            "logit(foil). Beside it: how much the last token looks at the target's earlier "
            "copy. Click a head in either map to knock it out (step 1).",
            controls,
            views,
            (self.by_effect, self.by_weight, self.first_note),
        )
        show_runs(live, self.progress, self.cancel_button, when=lambda: live.wanted.ranked)
        self.cancel_button.clicked.connect(
            lambda: self.tell("Ranking cancelled; the model is intact.", "info")
        )
        for view in (self.effect_map, self.weight_map):
            toggle_on_click(view, self)

    def views(self) -> dict[str, QWidget]:
        return {"effect": self.effect_map, "weight": self.weight_map}

    def top_head(self) -> dict | None:
        """The head ranked first (by effect once ranked, else by weight) as a cell of Inside a head:
        from the last token to the target's earlier copy."""
        r = self.result
        if r is None:
            return None
        ranking = r.ranking.ranking if r.ranking is not None else r.looking
        if ranking is None:
            return None
        earlier = [i for i, t in enumerate(r.prompt.ids[:-1]) if r.target is not None and t == r.target.id]
        best = ranking.best
        return {
            "source": self.state.source, "prompt": self.state.prompt, "layer": best.layer + 1,
            "head": best.head + 1, "query": 0, "key": earlier[-1] + 1 if earlier else 1,
        }  # fmt: skip

    def script(self) -> Script:
        return scripts.which_heads(self.state, self.result.looking is not None)

    def draw(self, r: KnockResult) -> Notice:
        m = r.model
        ranking = r.ranking
        if ranking is not None:
            self.progress.finished()
            drop = ranking.drop
            reach = float(np.abs(drop).max()) or 1.0
            self.effect_map.set_scores(drop, (-reach, reach))
            where = "first token knocked out too" if ranking.first else "first token left alone"
            self.by_effect.setText(
                f"<b>By effect</b> (clean difference {ranking.clean:.2f}; {where}):<br>"
                + top_list(ranking.ranking, "")
            )
        else:
            if self.progress.state not in ("running", "stopped"):  # a cancel says where it stopped
                self.progress.idle()
            self.effect_map.set_scores(np.full((m.n_layers, m.n_heads), np.nan), (-1.0, 1.0))
            self.by_effect.setText(
                "<b>By effect</b>: tick the box to test all "
                f"{m.n_layers * m.n_heads} heads for this prompt, target, foil and ablation "
                f"({'the first token too' if r.first else 'the first token left alone'})."
            )
        if r.looking is not None:
            self.weight_map.set_scores(r.looking.scores, (0.0, 1.0))
            self.weight_map.set_title(f"Last token's weight on {visible(r.target.text)}")
            self.by_weight.setText("<b>By attention weight</b>:<br>" + top_list(r.looking, ""))
        else:
            self.weight_map.set_scores(np.full((m.n_layers, m.n_heads), np.nan), (0.0, 1.0))
            self.by_weight.setText("<b>By attention weight</b>: the target must occur earlier in the prompt.")
        for view in (self.effect_map, self.weight_map):
            view.set_knocked(r.heads)
        self.inside_button.setEnabled(ranking is not None or r.looking is not None)
        if r.notices:
            return " ".join(r.notices), "warning"
        if ranking is None:
            return None
        best = ranking.ranking.best
        return (
            f"Every head tested. Knocking out layer {best.layer + 1}, head {best.head + 1} lowers the "
            f"difference most, by {best.score:.2f}.",
            "info",
        )
