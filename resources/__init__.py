"""Data files shipped with the app: lesson texts (Markdown) and presets, read with importlib.resources."""

from importlib.resources import files


def lesson_text(name: str) -> str:
    """The Markdown of resources/lessons/<name>; FileNotFoundError if the file is missing."""
    return files(__name__).joinpath("lessons", name).read_text(encoding="utf-8")
