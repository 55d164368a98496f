"""Lesson texts fit the lecture: one `##` section per panel step, in order and titled like the step,
each short enough to read on a projector. Every panel in PANELS is checked, so a new panel's lesson
is held to the same rule as soon as the panel is listed."""

import re

import pytest

from app.panels import PANELS
from resources import lesson_text

FIRST_PARAGRAPH_WORDS = 60  # the one idea a step shows first
SECTION_WORDS = 200  # a step's text before its first ### subsection
SUBSECTION_WORDS = 200  # each ### subsection (detail, read after the step's main text)
WORD = re.compile(r"\S*\w\S*")


def prose_lines(markdown: str) -> list[str]:
    """The lines outside fenced code blocks; table rows become blank (numbers belong in tables)."""
    lines, fenced = [], False
    for line in markdown.splitlines():
        if line.lstrip().startswith("```"):
            fenced = not fenced
            lines.append("")
        elif fenced or line.lstrip().startswith("|"):
            lines.append("")
        else:
            lines.append(line)
    return lines


def sections(markdown: str) -> list[tuple[str, list[str]]]:
    """(title, body lines) of every level-2 heading, in order."""
    found: list[tuple[str, list[str]]] = []
    for line in prose_lines(markdown):
        if line.startswith("## "):
            found.append((line[3:].strip(), []))
        elif found:
            found[-1][1].append(line)
    return found


def split_subsections(body: list[str]) -> tuple[list[str], list[tuple[str, list[str]]]]:
    """A section's main text and its (### title, lines) subsections."""
    main, subs = [], []
    for line in body:
        if line.startswith("### "):
            subs.append((line[4:].strip(), []))
        elif subs:
            subs[-1][1].append(line)
        else:
            main.append(line)
    return main, subs


def first_paragraph(lines: list[str]) -> str:
    text = "\n".join(lines).strip()
    return re.split(r"\n\s*\n", text)[0] if text else ""


def words(text: str) -> int:
    return len(WORD.findall(text))


def panel_entries():
    """(key, steps) of every entry PANELS names, read from the entry itself."""
    return [(entry.key, tuple(entry.steps)) for entry in PANELS]


@pytest.mark.parametrize(("key", "steps"), panel_entries(), ids=lambda v: v if isinstance(v, str) else "")
def test_one_section_per_step_in_order_titled_like_the_step(key, steps):
    titles = [title for title, _ in sections(lesson_text(f"{key}.md"))]
    expected = [f"{number}. {step}" for number, step in enumerate(steps, 1)]
    assert titles == expected, f"{key}.md: the ## headings must be exactly {expected}"


@pytest.mark.parametrize(("key", "steps"), panel_entries(), ids=lambda v: v if isinstance(v, str) else "")
def test_every_section_is_short_enough_for_a_projector(key, steps):
    too_long = []
    for title, body in sections(lesson_text(f"{key}.md")):
        main, subs = split_subsections(body)
        if not first_paragraph(main):
            too_long.append(f"'{title}' has no text before its first subsection")
        if (n := words(first_paragraph(main))) > FIRST_PARAGRAPH_WORDS:
            too_long.append(f"'{title}': first paragraph {n} words > {FIRST_PARAGRAPH_WORDS}")
        if (n := words("\n".join(main))) > SECTION_WORDS:
            too_long.append(f"'{title}': {n} words > {SECTION_WORDS}")
        for sub, lines in subs:
            if (n := words("\n".join(lines))) > SUBSECTION_WORDS:
                too_long.append(f"'{title}' / '{sub}': {n} words > {SUBSECTION_WORDS}")
    assert too_long == [], f"{key}.md: " + "; ".join(too_long)


def test_the_text_before_the_first_step_is_one_short_paragraph():
    for key, _ in panel_entries():
        text = "\n".join(prose_lines(lesson_text(f"{key}.md")))
        opening = text.split("\n## ", 1)[0]
        body = "\n".join(line for line in opening.splitlines() if not line.startswith("# "))
        assert words(body) <= FIRST_PARAGRAPH_WORDS, f"{key}.md: the opening has {words(body)} words"


def test_the_rules_catch_what_they_are_meant_to_catch():
    text = (
        "# T\n\nIntro.\n\n## 1. A\n\nOne idea.\n\n| a | b |\n|---|---|\n\n"
        "### Details\n\nMore.\n\n## 2. B\n\nx\n"
    )
    found = sections(text)
    assert [t for t, _ in found] == ["1. A", "2. B"]
    main, subs = split_subsections(found[0][1])
    assert words("\n".join(main)) == 2 and [s for s, _ in subs] == ["Details"]
    assert first_paragraph(["", "a b", "c", "", "d"]) == "a b\nc"
    assert sections("```\n## not a heading\n```\n## 1. Real\n")[0][0] == "1. Real"
