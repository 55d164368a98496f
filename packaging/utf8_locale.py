"""PyInstaller runtime hook: a UTF-8 character locale when the C locale is in force.

Started with no LANG or LC_* (some launchers, cron, ssh, containers), the ``python`` program switches
the C locale's LC_CTYPE to C.UTF-8 before anything runs (PEP 538), so Qt, which needs a UTF-8
locale, says nothing. The frozen interpreter starts in UTF-8 mode but leaves the locale alone, and
Qt then warns on stderr that it is switching to C.UTF-8 itself. This hook does what ``python`` does,
before the app imports Qt: only LC_CTYPE changes, and an explicit LC_ALL is respected as it is there.
A runtime hook rather than the launcher, because it concerns the frozen interpreter only: the pip
install gets the same from Python itself.
"""

import locale
import os


def coerce_c_locale() -> None:
    if os.environ.get("LC_ALL"):
        return
    try:
        current = locale.setlocale(locale.LC_CTYPE, "")
    except locale.Error:  # the environment names a locale this system lacks: C stays in force
        current = locale.setlocale(locale.LC_CTYPE)
    if current not in ("C", "POSIX"):
        return
    for name in ("C.UTF-8", "C.utf8", "UTF-8"):  # the names PEP 538 tries, in its order
        try:
            locale.setlocale(locale.LC_CTYPE, name)
        except locale.Error:
            continue
        os.environ["LC_CTYPE"] = name  # for Qt, which reads the environment, and for child processes
        return


coerce_c_locale()
