"""Panel "Linear attention": the other way past n², its running state, and what it forgets.

Independent steps: the bracket trick on the first article's example, feature maps against
softmax, the running state beside real models' KV caches, associative recall for softmax,
linear, delta-rule and gated memories, and three tiny models trained live on recall. Every number
comes from core (``maths.linear``, ``maths.recall``, ``maths.cache_size``, ``lab.recall_task``)
via ``state.py``.
"""

from __future__ import annotations

from app.panels.base import Panel
from app.panels.linear.bracket import BracketPage
from app.panels.linear.features import FeaturesPage
from app.panels.linear.recall import RecallPage
from app.panels.linear.running import RunningPage
from app.panels.linear.trained import TrainedPage


class LinearPanel(Panel):
    steps = (
        "The bracket trick",
        "Feature maps",
        "The running state",
        "What it forgets",
        "Trained, not assumed",
    )

    def __init__(self, parent=None):
        super().__init__(parent)
        self.bracket = BracketPage()
        self.features = FeaturesPage()
        self.running = RunningPage()
        self.recall = RecallPage()
        self.trained = TrainedPage()
        self.add_steps(self.bracket, self.features, self.running, self.recall, self.trained)
        self.set_step(0)

    def exercise(self) -> None:
        for i, page in enumerate((self.bracket, self.features, self.running, self.recall, self.trained)):
            self.set_step(i)
            page.exercise()
        self.set_step(0)
