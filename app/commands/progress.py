"""What a slow command is doing, said as it goes, so that nobody waits in silence.

Every wait that can pass a second gets a stage line ("loading the model minilm…") on stderr, so
the table or JSON on stdout stays clean (the smoke, whose report is its progress, says them on
stdout). While a stage lasts, a heartbeat says it again at least every HEARTBEAT_S with the
time it has taken: on a terminal the open line is rewritten in place ("loading the model
minilm… (4 s)"), piped a line is added, so a log shows where the time goes too. ``working(text)``
sets what the heartbeat says without printing anything yet: a step that is over in a moment
leaves no line. A counter ("loading steps: 2/5") ticks on a terminal and is said piped by the
heartbeat.

One message per line: a line left open on the terminal (a counter, a rewritten stage) is ended
with a newline before anything else reaches stdout or stderr. ``session()``, which main() runs
every subcommand in, puts a guard on both streams for that and runs the heartbeat.
"""

from __future__ import annotations

import importlib.util
import re
import sys
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager

HEARTBEAT_S = 1.5  # a line at least this often while a stage lasts (the aim: one every 2 s)
TERMINAL_HEARTBEAT_S = 1.0  # on a terminal the open line's clock ticks every second
FIRST_S = 0.5  # a command that has said nothing yet gets its status said this soon
LOOK_S = 0.1  # how often the heartbeat looks
# A heartbeat line ends with the time its stage has taken, "(4 s)": tests tell them apart by it.
HEARTBEAT_LINE = re.compile(r" \((?:\d+ min )?\d+ s\)$")
# Commands whose report on stdout is their progress: their stages go there, and stderr stays empty
# unless something is wrong.
REPORTS_ON_STDOUT = ("smoke",)


def stage(text: str) -> None:
    """Say now that a step that may take a while starts (and keep saying it while it lasts)."""
    with _state.lock:
        _state.begin(f"{text}…")
        _state.say(_state.status, keep_open=_state.terminal)


def working(text: str, detail: Callable[[], str] | None = None) -> None:
    """What the heartbeat says from now on, printed only once the step has lasted a while;
    ``detail()``, asked by the heartbeat (in its own thread), adds how far the step has got."""
    with _state.lock:
        _state.begin(f"{text}…")
        _state.detail = detail


def say(text: str) -> None:
    """A line on the progress stream (stderr; stdout for the smoke), after any open line."""
    with _state.lock:
        _state.say(text)


def importing(module: str) -> None:
    """A stage line for importing ``module`` (torch takes seconds), when it is installed and not
    imported yet."""
    if module not in sys.modules and importlib.util.find_spec(module) is not None:
        stage(f"loading {module}")


def update(text: str, last: bool = False) -> None:
    """How far the current stage has got ("41 of 93 MB"): at once on a terminal, over the last
    update's line (``last``: the line is then finished); piped, said by the heartbeat, with the
    time since the stage began."""
    with _state.lock:
        _state.status = text
        if _state.terminal:
            _state.say(text, keep_open=not last, rewrite=_state.open_update)
            _state.open_update = not last


def counter(label: str) -> Callable[[int, int], None]:
    """A ``progress(done, total)`` callback saying "label: done/total" as ``update`` does."""

    def progress(done: int, total: int) -> None:
        update(f"{label}: {done}/{total}", last=done >= total)

    return progress


def elapsed(seconds: float) -> str:
    """'4 s', '2 min 05 s'."""
    whole = int(seconds + 0.5)
    return f"{whole // 60} min {whole % 60:02d} s" if whole >= 60 else f"{whole} s"


# What core.models.load_model does after each of its progress(done, 5) calls.
LOAD_STEPS = (
    "opening its folder",
    "reading its config",
    "reading its tokenizer",
    "reading its weights",
    "checking its numbers against transformers",
)


def loading(source: str) -> None:
    """The stage line of loading the model ``source``, for a command that says it early."""
    stage(f"loading the model {source}")


def load_model(source: str, expect: str | None = None, said: bool = False):
    """The model ``source`` names (``expect``: its kind), loaded with a stage line (``said``: the
    command has said ``loading`` already) and its steps as they go; a missing torch or
    transformers becomes the one-line ValueError every command prints."""
    if not said:
        loading(source)
    first = "importing torch and transformers" if "transformers" not in sys.modules else LOAD_STEPS[0]

    def steps(done: int, total: int) -> None:
        doing = (first, *LOAD_STEPS[1:])[done] if done < min(total, len(LOAD_STEPS)) else ""
        update(f"loading steps: {done}/{total}" + (f", {doing}" if doing else ""), last=done >= total)

    from core import models

    try:
        return models.load_model(source, progress=steps, expect=expect)
    except models.ModelsExtraMissing as exc:
        raise ValueError(str(exc)) from exc


class _State:
    """Where the progress stream stands. Every field is read and written under ``lock``."""

    def __init__(self) -> None:
        self.lock = threading.RLock()
        self.reset()

    def reset(self, stream=None) -> None:
        self.stream = stream  # where progress goes, unguarded (None: sys.stderr as it is now)
        self.terminal = _is_terminal(stream) if stream is not None else False
        self.status: str | None = None  # what is going on, as the heartbeat says it
        self.detail: Callable[[], str] | None = None  # how far it has got, asked by the heartbeat
        self.since = time.monotonic()  # when that started
        self.last = time.monotonic()  # when anything last reached stdout or stderr
        self.open = ""  # the text of the unfinished line on the terminal ("" when none)
        self.open_update = False  # that line is an update's: the next update rewrites it
        self.mid_line = False  # the program's own output stopped mid-line: no heartbeat now
        self.said = False  # anything has reached stdout or stderr since the session began

    def out(self):
        return self.stream if self.stream is not None else sys.stderr

    def begin(self, status: str) -> None:
        if status != self.status:
            self.since = time.monotonic()
        self.status, self.detail = status, None

    def end_line(self) -> None:
        """End the open line, so that what comes next starts a line of its own."""
        if self.open:
            self.open, self.open_update = "", False
            stream = self.out()
            stream.write("\n")
            stream.flush()

    def say(self, text: str, keep_open: bool = False, rewrite: bool = False) -> None:
        """Write ``text`` as a line; ``keep_open``: leave it unfinished (on a terminal), for the
        heartbeat or the next count to rewrite; ``rewrite``: over the open line."""
        stream = self.out()
        if rewrite and self.open:
            clear = "\x1b[K" if len(text) < len(self.open) else ""
            stream.write(f"\r{text}{clear}")
        else:
            self.end_line()
            stream.write(text)
        if keep_open:
            self.open = text
        else:
            stream.write("\n")
            self.open, self.open_update = "", False
        stream.flush()
        self.last, self.said = time.monotonic(), True

    def beat(self) -> None:
        """Say the status again, with its time, when nothing has been written for a while."""
        now = time.monotonic()
        due = FIRST_S if not self.said else TERMINAL_HEARTBEAT_S if self.terminal else HEARTBEAT_S
        if self.status is None or self.mid_line or now - self.last < due:
            return
        try:
            detail = self.detail() if self.detail is not None else ""
        except Exception:  # read from another thread while it changes: say less
            detail = ""
        text = f"{self.status}{' ' + detail if detail else ''} ({elapsed(now - self.since)})"
        self.say(text, keep_open=self.terminal, rewrite=self.open.startswith(self.status))


_state = _State()


class _Guarded:
    """A stream that ends the open progress line before anything is written to it."""

    def __init__(self, stream, output: bool):
        self._stream = stream
        self._output = output  # the command's stdout: a line there ends the stage waited for

    def write(self, text: str) -> int:
        if not text:
            return 0
        with _state.lock:
            _state.end_line()
            written = self._stream.write(text)
            _state.last, _state.said = time.monotonic(), True
            _state.mid_line = not text.endswith("\n")
            if self._output and not _state.mid_line:
                _state.status = None
            return written

    def writelines(self, lines) -> None:
        for line in lines:
            self.write(line)

    def __getattr__(self, name: str):
        return getattr(self._stream, name)


@contextmanager
def session(name: str, to_stdout: bool = False) -> Iterator[None]:
    """Run the command ``name`` with its progress said (on stdout with ``to_stdout``), the
    heartbeat on and any open line ended before other output; afterwards the streams are as they
    were. Until the command says what it is doing, the heartbeat says that it is starting."""
    out, err = sys.stdout, sys.stderr
    with _state.lock:
        _state.reset(out if to_stdout else err)
        _state.begin(f"attention-lab {name}: starting…")
    sys.stdout, sys.stderr = _Guarded(out, output=True), _Guarded(err, output=False)
    stop = threading.Event()

    def heartbeat() -> None:
        while not stop.wait(LOOK_S):
            with _state.lock:
                _state.beat()

    beating = threading.Thread(target=heartbeat, name="progress heartbeat", daemon=True)
    beating.start()
    try:
        yield
    finally:
        stop.set()
        beating.join()
        with _state.lock:
            _state.end_line()
            _state.reset()
        sys.stdout, sys.stderr = out, err


def _is_terminal(stream) -> bool:
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError):
        return False
