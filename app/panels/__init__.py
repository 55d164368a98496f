"""PANELS: every panel class, in teaching order. The window, the smoke command and the tests
iterate over this one list; a panel never imports another panel."""

from app.panels.model import ModelPanel
from app.panels.qkv import QKVPanel

PANELS = [QKVPanel, ModelPanel]
