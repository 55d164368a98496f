"""Numbers a person types, parsed and bounded before they reach NumPy, torch or Qt.

Each parser takes the text as typed and returns a value inside its range, or raises ValueError
with a one-line message that names the allowed range. Nothing else escapes: huge integers, NaN,
±∞, negative zero (returned as 0), Unicode digits (read as the digits they are) and empty text
are all handled here, so the panels and the command line never pass an unchecked number on.

    whole("12", "Heads", 1, 64) -> 12          real("0,5", "β", 0.01, 100) -> 0.5
    positions("0, 5", "Global positions", 63) -> (0, 5)
    reals("1, 2, 3", "Scores", -1e3, 1e3, 12) -> (1.0, 2.0, 3.0)
    wholes("64, 8 16", "Pairs", 1, 8192, 12) -> (8, 16, 64)
    lengths("128:1024") -> (128, 256, 512, 1024)
"""

from __future__ import annotations

import math

MAX_TEXT = 10_000  # longer text is refused before any conversion is tried
MAX_LENGTH = 1 << 20  # the longest sequence a benchmark may be asked for (1,048,576 tokens)
MAX_SEED = 2**32 - 1


def _shown(text: str) -> str:
    """What was typed, short enough for a one-line message."""
    text = " ".join(str(text).split())
    return text if len(text) <= 24 else text[:21] + "…"


def _clean(text: str) -> str:
    """``text`` stripped, with the minus sign "−" read as "-"."""
    if not isinstance(text, str):
        raise ValueError(f"Expected typed text, got {type(text).__name__}.")
    if len(text) > MAX_TEXT:
        raise ValueError(f"That is {len(text):,} characters; type at most {MAX_TEXT:,}.")
    return text.strip().replace("−", "-")


def _range(low, high) -> str:
    return f"from {low:,} to {high:,}" if isinstance(low, int) else f"from {low:g} to {high:g}"


def whole(text: str, name: str, low: int, high: int) -> int:
    """A whole number in low … high, typed as digits (any script's), e.g. "12" or "-3"."""
    cleaned = _clean(text)
    problem = f"{name} must be a whole number {_range(low, high)}"
    if len(cleaned) > len(str(high)) + len(str(low)) + 8:  # surely out of range: skip the conversion
        why = "is out of range" if cleaned.lstrip("+-").isdigit() else "is not one"
        raise ValueError(f"{problem}; “{_shown(text)}” {why}.")
    try:
        value = int(cleaned)
    except ValueError:
        raise ValueError(f"{problem}; “{_shown(text)}” is not one.") from None
    if not low <= value <= high:
        raise ValueError(f"{problem}; {_shown(text)} is out of range.")
    return value


def real(text: str, name: str, low: float, high: float) -> float:
    """A finite number in low … high; "−" and a decimal comma are accepted ("−0,5")."""
    cleaned = _clean(text).replace(",", ".")
    problem = f"{name} must be a number {_range(float(low), float(high))}"
    try:
        value = float(cleaned)
    except ValueError:
        raise ValueError(f"{problem}; “{_shown(text)}” is not a number.") from None
    if not math.isfinite(value):
        raise ValueError(f"{problem}; “{_shown(text)}” is not a finite number.")
    if not low <= value <= high:
        raise ValueError(f"{problem}; {_shown(text)} is out of range.")
    return value + 0.0  # -0.0 becomes 0.0


def _parts(text: str) -> list[str]:
    return _clean(text).replace(",", " ").split()


def reals(text: str, name: str, low: float, high: float, max_count: int) -> tuple[float, ...]:
    """One to ``max_count`` numbers in low … high separated by commas or spaces: "1, 2, 3"."""
    parts = _parts(text)
    if not parts:
        raise ValueError(f"{name}: type at least one number, e.g. 1, 2, 3.")
    if len(parts) > max_count:
        raise ValueError(f"{name}: type at most {max_count} numbers; you typed {len(parts)}.")
    return tuple(real(p, name, low, high) for p in parts)


def positions(text: str, name: str, high: int) -> tuple[int, ...]:
    """Distinct positions 0 … high separated by commas or spaces, sorted: "5, 0" -> (0, 5).

    Empty text gives no positions.
    """
    return tuple(sorted({whole(p, name, 0, high) for p in _parts(text)}))


def wholes(text: str, name: str, low: int, high: int, max_count: int) -> tuple[int, ...]:
    """One to ``max_count`` distinct whole numbers in low … high, sorted: "64, 8 16" -> (8, 16, 64)."""
    parts = _parts(text)
    if not parts or len(parts) > max_count:
        raise ValueError(
            f"{name}: type 1 to {max_count} whole numbers, e.g. 8, 16, 32; you typed {len(parts)}."
        )
    return tuple(sorted({whole(p, name, low, high) for p in parts}))


def seed(text: str, name: str = "Seed") -> int:
    """A random seed, 0 … 2³² − 1."""
    return whole(text, name, 0, MAX_SEED)


def lengths(text: str, high: int = MAX_LENGTH) -> tuple[int, ...]:
    """Sequence lengths 1 … high: "128 256 1024", "128, 512" or a doubling range "128:65536"."""
    found: list[int] = []
    for part in _parts(text):
        low, colon, top = part.partition(":")
        if not colon:
            found.append(whole(low, "Each sequence length", 1, high))
            continue
        n = whole(low, f"The start of {part!r}", 1, high)
        end = whole(top, f"The end of {part!r}", 1, high)
        if end < n:
            raise ValueError(f"In the range {part!r} the end is below the start.")
        while n <= end:  # at most 21 doublings within MAX_LENGTH
            found.append(n)
            n *= 2
    if not found:
        raise ValueError("Give at least one sequence length, for example 256 512 1024 (or 128:4096).")
    return tuple(found)
