"""PANELS: every panel, in teaching order. The window, the smoke command and the tests iterate
over this one list; a panel never imports another panel.

An entry names its panel without importing it: the window imports a panel's module only when the
panel is first shown, so start-up pays for one panel, not all of them. An entry stands in for its
class where a class is expected (``entry.steps``, ``entry()`` builds the panel).
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from importlib import import_module


@dataclass(frozen=True)
class PanelEntry:
    """A panel's key and title, written here only: the Panel answers them from its entry."""

    key: str  # id: lesson file resources/lessons/<key>.md, settings, screenshots
    title: str  # the navigation list's text
    target: str  # "module:Class" of the Panel subclass
    # File-menu entries the window adds for this panel: (menu text, name of a method to call
    # once the panel is shown), e.g. ("Open model folder…", "choose_folder").
    file_actions: tuple[tuple[str, str], ...] = ()

    def load(self) -> type:
        """The panel's class (imports its module the first time)."""
        module, name = self.target.split(":")
        return getattr(import_module(module), name)

    def names(self, panel_class: type) -> bool:
        """Whether this entry's target is ``panel_class`` (imports nothing)."""
        module, name = self.target.split(":")
        return getattr(sys.modules.get(module), name, None) is panel_class

    @property
    def steps(self) -> tuple[str, ...]:
        return self.load().steps

    def lesson_file(self) -> str:
        return f"{self.key}.md"

    def __call__(self, *args, **kwargs):
        return self.load()(*args, **kwargs)


PANELS = [
    PanelEntry("qkv", "Q, K, V step by step", "app.panels.qkv:QKVPanel"),
    PanelEntry("scale", "Scale and temperature", "app.panels.scale:ScalePanel"),
    PanelEntry("masks", "Masks and variants", "app.panels.masks:MasksPanel"),
    PanelEntry("multihead", "Multi-head", "app.panels.multihead:MultiHeadPanel"),
    PanelEntry(
        "model", "Real model", "app.panels.model:ModelPanel", (("Open &model folder…", "choose_folder"),)
    ),
    PanelEntry(
        "next_token",
        "Next token",
        "app.panels.next_token:NextTokenPanel",
        (("Open &decoder folder…", "choose_folder"),),
    ),
    PanelEntry(
        "inside_decoder",
        "Inside a decoder",
        "app.panels.inside_decoder:InsideDecoderPanel",
        (("Open decoder folder for &Inside a decoder…", "choose_folder"),),
    ),
    PanelEntry(
        "stream",
        "The residual stream",
        "app.panels.stream:StreamPanel",
        (("Open decoder folder for The residual &stream…", "choose_folder"),),
    ),
    PanelEntry(
        "patching",
        "Patching",
        "app.panels.patching:PatchingPanel",
        (("Open decoder folder for &Patching…", "choose_folder"),),
    ),
    PanelEntry(
        "circuits",
        "Circuits",
        "app.panels.circuits:CircuitsPanel",
        (("Open decoder folder for &Circuits…", "choose_folder"),),
    ),
    PanelEntry(
        "inside_head",
        "Inside a head",
        "app.panels.inside_head:InsideHeadPanel",
        (("Open model folder for Inside a &head…", "choose_folder"),),
    ),
    PanelEntry(
        "atlas",
        "Head atlas",
        "app.panels.atlas:AtlasPanel",
        (("Open decoder folder for Head &atlas…", "choose_folder"),),
    ),
    PanelEntry(
        "words",
        "Which words mattered",
        "app.panels.words:WordsPanel",
        (("Open decoder folder for &Which words mattered…", "choose_folder"),),
    ),
    PanelEntry("position", "Position", "app.panels.position:PositionPanel"),
    PanelEntry("cost", "Cost and FlashAttention", "app.panels.cost:CostPanel"),
    PanelEntry("linear", "Linear attention", "app.panels.linear:LinearPanel"),
    PanelEntry("bench", "Benchmark", "app.panels.bench:BenchPanel"),
    PanelEntry("memory", "Memory (Hopfield)", "app.panels.memory:MemoryPanel"),
    PanelEntry("induction", "Grow an induction head", "app.panels.induction:InductionPanel"),
]


def entry_of(panel_class: type) -> PanelEntry:
    """The entry of PANELS whose target is ``panel_class``."""
    found = next((entry for entry in PANELS if entry.names(panel_class)), None)
    if found is None:
        raise LookupError(f"{panel_class.__name__} has no entry in PANELS")
    return found
