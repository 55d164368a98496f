"""docs/notebook.md runs as written: its ``python`` blocks are executed in order in one namespace,
and what each prints must match the ``text`` block right after it (see "How to read the
examples" in the document for the conventions).

Numbers are compared with a tolerance of one unit in their last printed digit, so a value that
rounds the other way on another machine still passes. Blocks marked ``python smollm2`` need
SmolLM2 added (``attention-lab models add smollm2``) and are skipped without it.
"""

import contextlib
import io
import re
import tempfile
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pytest

from core.user_data import OVERRIDE

DOC = Path(__file__).resolve().parents[1] / "docs" / "notebook.md"
FENCE = re.compile(r"^```([\w-]*)[ \t]*([^\n]*)\n(.*?)^```[ \t]*$", re.MULTILINE | re.DOTALL)
NUMBER = re.compile(r"[-+]?(?:\d+\.\d*|\.\d+|\d+)(?:[eE][-+]?\d+)?")


@dataclass(frozen=True)
class Block:
    code: str
    line: int  # where the block starts in the document, 1-based
    expected: str | None  # the text block after it, None when there is none
    expected_span: tuple[int, int] | None  # where that text lies in the document
    optional: bool  # ``python smollm2``: needs SmolLM2


def blocks(text: str) -> list[Block]:
    """The document's python blocks in order, each with the output block that follows it."""
    fences = list(FENCE.finditer(text))
    found = []
    for i, fence in enumerate(fences):
        if fence.group(1) != "python":
            continue
        after = fences[i + 1] if i + 1 < len(fences) else None
        follows = (
            after is not None and after.group(1) == "text" and not text[fence.end() : after.start()].strip()
        )
        found.append(
            Block(
                code=fence.group(3),
                line=text.count("\n", 0, fence.start()) + 1,
                expected=after.group(3) if follows else None,
                expected_span=after.span(3) if follows else None,
                optional="smollm2" in fence.group(2).split(),
            )
        )
    return found


def same(got: str, expected: str) -> bool:
    """Line by line, trailing spaces ignored; numbers may differ by one in their last digit."""
    got_lines, expected_lines = got.rstrip().splitlines(), expected.rstrip().splitlines()
    if len(got_lines) != len(expected_lines):
        return False
    return all(_same_line(a.rstrip(), b.rstrip()) for a, b in zip(got_lines, expected_lines, strict=True))


def _same_line(got: str, expected: str) -> bool:
    if got == expected:
        return True
    if NUMBER.sub("#", got) != NUMBER.sub("#", expected):
        return False
    for a, b in zip(NUMBER.findall(got), NUMBER.findall(expected), strict=True):
        digits = len(b.split(".")[1].split("e")[0].split("E")[0]) if "." in b else 0
        exponent = float("1" + b[b.lower().index("e") :]) if "e" in b.lower() else 1.0
        if abs(float(a) - float(b)) > 1.01 * 10.0**-digits * exponent:
            return False
    return True


def smollm2_added() -> bool:
    """SmolLM2 is added here (the tests' own data folder is empty, so the user's is asked)."""
    from core import user_data
    from core.models import smollm2

    if smollm2.installed_folder() is not None:
        return True
    return (user_data._default() / smollm2.NAME / smollm2.RECEIPT).is_file()


def test_the_same_checks():
    assert same("0.12 0.5\n", "0.13 0.5")
    assert same("x = 1.5e-03", "x = 1.6e-03") and not same("x = 1.5e-03", "x = 1.8e-03")
    assert not same("0.10", "0.12") and not same("cat 1", "dog 1") and not same("1\n2", "1")


@pytest.mark.models
def test_every_example_prints_what_the_document_shows(monkeypatch, tmp_path):
    torch = pytest.importorskip("torch")
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))  # the tiny model's folder
    # The document sets numpy's print options and torch's seed; other tests keep their own.
    with np.printoptions(), torch.random.fork_rng():
        checked = run_blocks(monkeypatch, {"__name__": "notebook"}, smollm2_added())
    assert checked >= 20


def run_blocks(monkeypatch, namespace: dict, smollm2: bool) -> int:
    """Run the document's blocks in ``namespace``, checking each one's output; how many ran."""
    checked = 0
    for block in blocks(DOC.read_text(encoding="utf-8")):
        if block.optional and not smollm2:
            continue
        printed = io.StringIO()
        with contextlib.redirect_stdout(printed), monkeypatch.context() as patch:
            if block.optional:  # the user's data folder, where SmolLM2 was added
                patch.delenv(OVERRIDE)
            exec(compile(block.code, f"docs/notebook.md, line {block.line}", "exec"), namespace)
        expected = block.expected or ""
        assert same(printed.getvalue(), expected), (
            f"The example at line {block.line} printed\n{printed.getvalue()}\ninstead of\n{expected}"
        )
        checked += 1
    return checked


def test_the_document_uses_only_public_names():
    """Every ``module.name`` of core the examples use is in that module's ``__all__``."""
    import importlib
    import importlib.util

    code = "\n".join(block.code for block in blocks(DOC.read_text(encoding="utf-8")))
    modules = {}  # the name a module goes by in the examples -> the module
    for package, names in re.findall(r"^from (core(?:\.\w+)*) import ([\w, ]+)$", code, re.MULTILINE):
        for imported in names.split(","):
            name, _, alias = imported.strip().partition(" as ")
            if importlib.util.find_spec(f"{package}.{name}") is not None:  # a module, not a function
                modules[alias or name] = f"{package}.{name}"
    private = [
        f"{path}.{name}"
        for alias, path in modules.items()
        for name in set(re.findall(rf"\b{alias}\.(\w+)", code))
        if name not in importlib.import_module(path).__all__
    ]
    assert len(modules) >= 15 and private == []
