"""Step 6: two decoders side by side: which heads carry the answer, which are sinks and which do
induction, each head placed at its depth so that models of different sizes line up."""

from __future__ import annotations

from dataclasses import dataclass

import pyqtgraph as pg
from PySide6.QtWidgets import QComboBox, QFormLayout, QVBoxLayout, QWidget

from app.panels.inside_decoder.state import IOI_PROMPT, SINK_PROMPT, Progress, decoder
from app.panels.model_choices import model_choices
from app.panels.scripts import Script, model_code
from app.panels.step import Live, Notice, Step
from app.widgets.plots import plot
from app.widgets.reflow_grid import ReflowGrid, share_evenly
from app.widgets.text import note
from core.interp.compare import CARRIES, INDUCTION, SINK, Profile, profile, side_by_side
from core.models import DECODER, gemma3, smollm2

FIRST, SECOND = "#3d7bd9", "#ff8c00"
TITLES = {
    "answer": "Answer lost, one head out",
    "sink": "Weight on the first token",
    "induction": "Induction score",
}
NONE = "(no other decoder here)"
LINES = {"answer": CARRIES, "sink": SINK, "induction": INDUCTION}  # what the sentences count above


@dataclass(frozen=True)
class CompareState:
    source: str = ""  # the panel's model; "" before one is loaded
    other: str = ""  # the decoder to compare it with; "" while none is chosen
    prompt: str = IOI_PROMPT
    target: str = "Mary"
    foil: str = "John"
    sink_prompt: str = SINK_PROMPT
    n: int = 30  # random tokens in one copy of the induction test
    seed: int = 0


@dataclass(frozen=True)
class CompareResult:
    first: Profile
    second: Profile
    sentences: tuple[str, ...]


def compute_compare(s: CompareState, progress: Progress | None = None) -> CompareResult:
    """Both models' profiles; the second model loads on first use."""
    if not s.other:
        raise ValueError(
            "There is no other decoder to compare with: add Gemma 3 or SmolLM2, or open a decoder folder."
        )
    if s.other == s.source:
        raise ValueError("Choose a different decoder to compare with: this is the one the panel shows.")
    tick = progress or (lambda done, total: None)
    models = [decoder(source) for source in (s.source, s.other)]
    steps = [m.n_layers + 2 for m in models]  # what profile counts for each: its layers, then two

    def from_step(before: int) -> Progress:  # one model's count, after the models before it
        return lambda done, _: tick(before + done, sum(steps))

    found = [
        profile(model, s.prompt, s.target, s.foil, s.sink_prompt, s.n, s.seed, from_step(sum(steps[:k])))
        for k, model in enumerate(models)
    ]
    return CompareResult(*found, tuple(side_by_side(*found)))


def partner(source: str, others: list[str]) -> str:
    """The decoder to compare ``source`` with by default among ``others``: Gemma 3 or SmolLM2,
    whichever it is not, else the first; "" when there is none."""
    preferred = [key for key in (gemma3.KEY, smollm2.KEY) if key in others]
    return (preferred or others or [""])[0]


class ComparePage(Step):
    """``sync(states)`` takes the model and prompts of steps 2, 4 and 5 when the step is shown."""

    def __init__(self):
        super().__init__(Live(CompareState(), compute_compare, background=True, start=False))
        self.other = QComboBox()
        self.other.setMinimumContentsLength(18)
        self.other.activated.connect(self._choose)
        self._fill([])
        self.summary = note("Choose a second decoder to compare with; add Gemma 3 from the model box.")
        controls = QFormLayout()
        controls.addRow("Compare with", self.other)
        self.plots = {measure: plot(title, "depth") for measure, title in TITLES.items()}
        self.points = {}
        self.key = note()
        dashed = pg.mkPen("#888888", style=pg.QtCore.Qt.PenStyle.DashLine)
        for measure, view in self.plots.items():
            view.setXRange(0, 1)
            view.addItem(pg.InfiniteLine(LINES[measure], angle=0, pen=dashed))
            self.points[measure] = [
                view.plot(pen=None, symbol=symbol, symbolSize=7, symbolBrush=colour, symbolPen=None)
                for symbol, colour in (("o", FIRST), ("t", SECOND))
            ]
        plots = list(self.plots.values())
        wide = [(view, 0, k, 1) for k, view in enumerate(plots)]
        narrow = [(view, k // 2, k % 2, 1) for k, view in enumerate(plots)]  # larger text: two over one
        row = ReflowGrid(wide, narrow, stretch=(0, 0))
        share_evenly(plots)
        views = QVBoxLayout()
        views.addWidget(self.key)
        views.addLayout(row, 1)
        self.layout_with(
            "The same prompts on two decoders: every head knocked out alone on step 2's sentence, "
            "the weight on the first token on step 4's prompt, and the induction score on step 5's "
            "random tokens. Each head sits at the depth of its layer, so a 30-layer model and an "
            "18-layer one line up; dashed lines mark what the sentences below count.",
            controls,
            views,
            (self.summary,),
        )

    def views(self) -> dict[str, QWidget]:
        return {f"compare {measure}": view for measure, view in self.plots.items()}

    def sync(self, source: str, recent: list[str], knock, sinks, induction) -> None:
        """Compare ``source`` with the chosen decoder (at first a partner among the decoders here
        and the ``recent`` folders) on the prompts the states of steps 2, 4 and 5 hold now."""
        choices = [(label, key) for label, key, _ in model_choices(DECODER, recent) if key != source]
        others = [key for _, key in choices]
        other = self.state.other if self.state.other in others else partner(source, others)
        self._fill(choices)
        self.other.setCurrentIndex(max(self.other.findData(other), 0))
        change = dict(source=source, other=other, prompt=knock.prompt, target=knock.target, foil=knock.foil,
                      sink_prompt=sinks.prompt, n=induction.n, seed=induction.seed)  # fmt: skip
        if any(getattr(self.live.wanted, k) != v for k, v in change.items()):
            self.apply(**change)

    def _fill(self, choices: list[tuple[str, str]]) -> None:
        """The box: ``choices`` (label, source), or one line saying there is none."""
        self.other.clear()
        for label, key in choices or [(NONE, "")]:
            self.other.addItem(label, key)

    def _choose(self, i: int) -> None:
        if self.other.itemData(i) != self.live.wanted.other:
            self.apply(other=self.other.itemData(i))

    def script(self) -> Script:
        return compare_script(self.state)

    def draw(self, r: CompareResult) -> Notice:
        for measure, (first, second) in self.points.items():
            for line, p in ((first, r.first), (second, r.second)):
                line.setData(p.depth.ravel(), getattr(p, measure).ravel())
        self.key.setText(
            f"<span style='color:{FIRST}'>●</span> {r.first.name} &nbsp; "
            f"<span style='color:{SECOND}'>▼</span> {r.second.name} &nbsp; "
            "(depth = (layer − ½) / layers, layers from 1)"
        )
        self.summary.setText("\n\n".join(r.sentences))
        return None


def compare_script(s: CompareState) -> Script:
    body = model_code(
        s.source, s.prompt, "from core.interp.compare import CARRIES, INDUCTION, SINK, profile, side_by_side"
    )
    body += f"""
    other = load_model({s.other!r})  # the decoder to compare with
    # Step 2's answer, step 4's prompt and step 5's random tokens (n, seed), on both models.
    target, foil, sink_prompt, n, seed = {s.target!r}, {s.foil!r}, {s.sink_prompt!r}, {s.n}, {s.seed}
    profiles = [profile(m, prompt, target, foil, sink_prompt, n, seed) for m in (model, other)]
    for p in profiles:
        rows = [f"L{{layer + 1}} H{{head + 1}}" for layer, head in np.ndindex(p.answer.shape)]
        columns = ["depth", "answer lost", "first token", "induction"]
        print(p.name)
        values = np.column_stack([a.ravel() for a in (p.depth, p.answer, p.sink, p.induction)])
        print(table(values, rows, columns))
    for sentence in side_by_side(*profiles):
        print(sentence)
    print(f"Dashed lines: answer {CARRIES}, first token {SINK}, induction {INDUCTION}")
    """
    picture = """
    for k, measure in enumerate(("answer", "sink", "induction")):
        plt.subplot(1, 3, k + 1)
        for p in profiles:
            plt.scatter(p.depth.ravel(), getattr(p, measure).ravel(), s=10, label=p.name)
        plt.xlabel("depth")
        plt.title(measure)
    plt.legend()
    """
    return Script(body, picture)
