"""Test set-up shared by every suite: Qt runs offscreen and settings go to a temporary folder."""

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
