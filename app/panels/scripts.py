"""Export a step as a Python script: a short program over ``core`` that rebuilds what the step
shows, prints its numbers and, when matplotlib is installed, draws its picture. Qt-free.

A step gives its ``Script`` (``Step.script``): the code that computes and prints, written for a
reader, and the code that draws with ``plt``. ``assemble`` adds the opening words, the imports of
the picture and the guard round it:

    text = assemble("Q, K, V step by step", 5, "Softmax", Script(body, picture))
"""

from __future__ import annotations

from dataclasses import dataclass
from textwrap import dedent, indent

from core import __version__


@dataclass(frozen=True)
class Script:
    body: str  # code: rebuild the state, compute, print what the step shows (dedented here)
    picture: str = ""  # code that draws the step's main picture with ``plt`` (dedented here)


def assemble(panel: str, number: int, step: str, script: Script) -> str:
    """The whole script for step ``number`` (from 1) of ``panel``."""
    head = f'''"""Attention Lab, "{panel}", step {number}: {step}.

Exported from Attention Lab {__version__}. Run it with the Python that runs the app
(python this_file.py): it rebuilds what the step showed, prints the numbers and, when
matplotlib is installed, draws the step's picture.
"""
'''
    parts = [head, dedent(script.body).strip() + "\n"]
    if script.picture:
        parts.append(
            "# The picture, drawn only when matplotlib is installed.\n"
            "try:\n"
            "    import matplotlib.pyplot as plt\n"
            "except ImportError:\n"
            "    plt = None\n"
            "if plt is not None:\n" + indent(dedent(script.picture).strip(), "    ") + "\n    plt.show()\n"
        )
    return "\n".join(parts)


def heatmap(values: str, rows: str, cols: str, title: str) -> str:
    """Picture code: the matrix named ``values`` as a heatmap, labelled by the lists ``rows`` and
    ``cols`` (names of variables in the script)."""
    return f"""
    plt.imshow({values}, cmap="viridis")
    plt.colorbar()
    plt.xticks(range(len({cols})), {cols}, rotation=90)
    plt.yticks(range(len({rows})), {rows})
    plt.title({title!r})
    plt.tight_layout()
    """


def horizontal_bars(values: str, labels: str, title: str) -> str:
    """Picture code: the list named ``values`` as horizontal bars, the first on top, labelled by the
    list ``labels`` (names of variables in the script)."""
    return f"""
    plt.barh(range(len({values})), {values})
    plt.yticks(range(len({labels})), {labels})
    plt.gca().invert_yaxis()
    plt.title({title!r})
    plt.tight_layout()
    """
