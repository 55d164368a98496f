"""How a token's text is shown: every blank or invisible character made visible, the one
spelling of a token in the panels, the command line and the exports.

    visible(" Paris")               # "␣Paris"
    pieces(model, ids)              # ("The", " capital", " of"): each token's text on its own
"""

from __future__ import annotations

import unicodedata

from core.models.kinds import LoadedModel

SIGNS = {" ": "␣", "\n": "↵", "\t": "⇥", "\r": "␍", "\u00a0": "⍽"}
BLANK_LETTERS = frozenset("\u115f\u1160\u3164\uffa0\u2800")  # Hangul fillers, the blank braille cell


def visible(piece: str) -> str:
    """A token's text with every blank or invisible character shown: "␣Paris", "↵", "⇥", "␍", "⍽"
    (no-break space), any other space, control or zero-width character as its code ("⟨U+200B⟩"),
    a leading combining mark on a dotted circle ("◌́"), and "∅" for an empty piece. The one
    spelling of a token in the panels, the command line and the exports."""
    if not piece:
        return "∅"
    if piece.isprintable() and " " not in piece and BLANK_LETTERS.isdisjoint(piece):  # most tokens
        text = piece
    else:  # isprintable() is False for every space but " ", every control and format character
        text = "".join(SIGNS.get(c) or (c if shown(c) else f"⟨U+{ord(c):04X}⟩") for c in piece)
    return "◌" + text if unicodedata.category(text[0]) in ("Mn", "Mc", "Me") else text


def shown(c: str) -> bool:
    return c.isprintable() and c not in BLANK_LETTERS


def pieces(model: LoadedModel, ids) -> tuple[str, ...]:
    """The text of each token on its own, e.g. ("The", " capital", " of")."""
    return tuple(model.tokenizer.decode([int(i)]) for i in ids)


__all__ = ["pieces", "shown", "visible"]
