"""Qt's messages on stderr: passed on as Qt writes them, less the offscreen platform's noise.

Its own module so that the window command and the smoke command share it without one importing the
other.
"""

from __future__ import annotations

import sys

# The offscreen platform (tests, CI) prints this whenever a window is shown; it is not the app's.
PLATFORM_NOISE = ("This plugin does not support propagateSizeHints()",)


def keep_platform_noise_off_stderr() -> None:
    """Pass Qt's messages to stderr as Qt does, leaving out the offscreen platform's noise."""
    from PySide6.QtCore import qFormatLogMessage, qInstallMessageHandler

    def on_message(kind, context, message: str) -> None:
        if message not in PLATFORM_NOISE:
            print(qFormatLogMessage(kind, context, message), file=sys.stderr)

    qInstallMessageHandler(on_message)


def restore_qt_messages() -> None:
    """Qt's own message handler again, for what Qt says after the app has ended."""
    from PySide6.QtCore import qInstallMessageHandler

    qInstallMessageHandler(None)
