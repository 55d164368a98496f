"""Every token shows its blank and invisible characters (core.decoder.visible)."""

from __future__ import annotations

import unicodedata

import pytest

from core.interp.token_text import visible


@pytest.mark.parametrize(
    ("piece", "shown"),
    [
        (" Paris", "␣Paris"),
        ("Paris", "Paris"),
        ("", "∅"),
        ("\n\n", "↵↵"),
        ("\t", "⇥"),
        ("\r\n", "␍↵"),
        ("\u00a0", "⍽"),  # SmolLM2's logit lens reads this after layer 1
        ("\u200b", "⟨U+200B⟩"),  # zero-width space
        ("\ufeff", "⟨U+FEFF⟩"),  # byte-order mark
        ("\u2028", "⟨U+2028⟩"),  # line separator
        ("\u3000", "⟨U+3000⟩"),  # ideographic space
        ("\x00", "⟨U+0000⟩"),
        ("a\u200db", "a⟨U+200D⟩b"),  # zero-width joiner
        ("\u0301", "◌\u0301"),  # a combining accent alone
        ("\u3164", "⟨U+3164⟩"),  # Hangul filler: a letter that prints as nothing
        ("\u2800", "⟨U+2800⟩"),  # the blank braille cell
        ("\u093f", "◌\u093f"),  # a spacing vowel sign alone
        ("é", "é"),
    ],
)
def test_visible(piece, shown):
    assert visible(piece) == shown


def test_no_character_is_left_blank():
    """Every code point below U+3100 comes out as something that prints and is not blank."""
    for code in range(0x3100):
        if 0xD800 <= code <= 0xDFFF:
            continue  # surrogates are not text
        shown = visible(chr(code))
        assert shown.strip() and all(c.isprintable() for c in shown), hex(code)
        assert unicodedata.category(shown[0]) not in ("Zs", "Cc", "Cf", "Mn", "Mc", "Me"), hex(code)
