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


def bars(values: str, labels: str, title: str, xlabel: str = "", ylabel: str = "") -> str:
    """Picture code: the list ``values`` as bars labelled by the list ``labels`` (names of variables
    in the script)."""
    return f"""
    plt.bar(range(len({values})), {values})
    plt.xticks(range(len({labels})), {labels})
    plt.xlabel({xlabel!r})
    plt.ylabel({ylabel!r})
    plt.title({title!r})
    plt.tight_layout()
    """


def lines(series: str, title: str, xlabel: str = "", ylabel: str = "", log: str = "") -> str:
    """Picture code: one line per entry of ``series``, code for a dict {label: (x values, y values)},
    with a legend; ``log``: the logarithmic axes, "x", "y" or "xy"."""
    scales = "".join(f'\n    plt.{axis}scale("log")' for axis in log)
    return f"""
    for label, (x, y) in {series}.items():
        plt.plot(x, y, marker=".", label=label)
    plt.xlabel({xlabel!r})
    plt.ylabel({ylabel!r}){scales}
    plt.title({title!r})
    plt.legend()
    plt.tight_layout()
    """


def subplots(*pictures: str, columns: int = 2) -> str:
    """Picture code: each of ``pictures`` in its own part of one figure, ``columns`` to a row."""
    rows = -(-len(pictures) // columns)
    parts = [f"plt.figure(figsize=({5 * columns}, {4 * rows}))"]
    for k, picture in enumerate(pictures, 1):
        parts += [f"plt.subplot({rows}, {columns}, {k})", dedent(picture).strip()]
    return indent("\n".join(parts), "    ")


def mosaic_code(strip: str) -> str:
    """Code that prints ``picture``, the mosaic of ``tiles`` (core.maths.head_tiles), one column of tiles
    at a time with its rows numbered as in the picture and ``tokens`` (or blocks) across. ``strip``:
    code for the heading of column ``k`` (counted from 0)."""
    return f"""
    n, m = tiles.maps.shape[2:]
    cols = tokens if m == len(tokens) else [f"block {{b}}" for b in range(m)]
    for k in range(tiles.maps.shape[1]):
        left = k * (m + tiles.gap)  # the picture column where this column of tiles starts
        print({strip})
        print(table(picture[:, left : left + m], range(len(picture)), cols))
    """


def hbars(values: str, labels: str, title: str) -> str:
    """Picture code: the list ``values`` as horizontal bars, the first on top, named by the list
    ``labels`` (names of variables in the script)."""
    return f"""
    plt.figure()
    plt.barh(range(len({values})), {values})
    plt.yticks(range(len({labels})), {labels})
    plt.gca().invert_yaxis()
    plt.title({title!r})
    plt.tight_layout()
    """


def model_code(source: str, prompt: str | None, *imports: str) -> str:
    """Code that loads the model as ``model`` with ``layers`` and ``heads`` (labels from 1) and,
    given a prompt, reads it as ``ids`` and ``pieces``; ``imports`` are more import lines."""
    core = {"from core.models import load_model", "from core.printing import table"}
    if prompt is not None:
        core |= {"from core.interp import prediction", "from core.interp import token_text"}
    lines = "\n    ".join(sorted({*core, *imports}))
    code = f"""
    import numpy as np

    {lines}

    model = load_model({source!r})  # the decoder the panel loaded: a key, a folder or a cache id
    layers = [str(k + 1) for k in range(model.n_layers)]  # counted from 1, as on screen
    heads = [str(k + 1) for k in range(model.n_heads)]
    """
    if prompt is not None:
        code += f"""
    prompt = {prompt!r}
    ids, dropped = prediction.encode(model, prompt)  # past the context: the first and last tokens
    pieces = [token_text.visible(p) for p in token_text.pieces(model, ids)]
    print("Tokens:", " | ".join(pieces))
    """
    return code
