"""PANELS: every panel class, in teaching order. The window, the smoke command and the tests
iterate over this one list; a panel never imports another panel."""

from app.panels.bench import BenchPanel
from app.panels.cost import CostPanel
from app.panels.masks import MasksPanel
from app.panels.memory import MemoryPanel
from app.panels.model import ModelPanel
from app.panels.multihead import MultiHeadPanel
from app.panels.next_token import NextTokenPanel
from app.panels.position import PositionPanel
from app.panels.qkv import QKVPanel
from app.panels.scale import ScalePanel

PANELS = [
    QKVPanel,
    ScalePanel,
    MasksPanel,
    MultiHeadPanel,
    ModelPanel,
    NextTokenPanel,
    PositionPanel,
    CostPanel,
    BenchPanel,
    MemoryPanel,
]
