"""Attention Lab's desktop app: PySide6 + pyqtgraph views over ``core``."""

import sys

if sys.implementation.name == "cpython" and sys.version_info < (3, 12):
    # PySide6 6.12's abi3 wheels return None from every void method without adding a reference.
    # From Python 3.12 on None is immortal and that is harmless; before it, each call drops None's
    # count by one and the process aborts ("deallocating None") after a few hundred repaints.
    # Give None a count no session can use up, as 3.12 does.
    import ctypes

    ctypes.c_ssize_t.from_address(id(None)).value += 1 << 40
