"""Headless subcommands of ``attention-lab``.

COMMANDS names each with the line ``attention-lab --help`` shows for it. Each is a module of this
package with ``add_arguments(parser)`` and ``run(args) -> int``, imported only when its name is on
the command line, so the window starts without them. A user error is raised as ValueError or
OSError with a one-line message; main() prints it and exits 2.
"""

from importlib import import_module
from types import ModuleType

COMMANDS = {
    "smoke": "open every panel offscreen, exercise its controls, save screenshots; non-zero on any problem",
    "heads": (
        "run a real model on a text and print its tokens, one head's weights, "
        "or the head that links two tokens"
    ),
    "predict": (
        "run a decoder language model (SmolLM2 by default) on a prompt: next-token probabilities, generation"
    ),
    "patch": (
        "activation patching: copy activations between a clean and a corrupted prompt and measure "
        "how much of the answer comes back"
    ),
    "explain": (
        "one real head's q, k, score and weight for a query and a key, why (the score split into "
        "parts) and what it writes"
    ),
    "stream": (
        "one token's residual stream through every layer of a decoder: the sizes of what goes in and "
        "out, the lens, and the final stream as the sum of its parts"
    ),
    "steer": (
        "steer a decoder with one vector, the difference of two texts' streams: the normal and the "
        "steered greedy completion side by side"
    ),
    "attribute": (
        "which words of a prompt mattered for a decoder's answer: attention, rollout, gradient × "
        "input, integrated gradients and occlusion, and how well they agree"
    ),
    "atlas": (
        "every head of a decoder scored at once: previous token, first token, self, duplicate "
        "token, induction and copying; the 2-D cloud of one head's queries and keys"
    ),
    "circuit": (
        "edge attribution patching: every connection between a decoder's heads and MLPs scored, "
        "the top ones patched exactly, and how much of the answer a circuit of N edges keeps"
    ),
    "export-script": (
        "write one step of a panel as a Python script over core, as File → Export experiment as Python does"
    ),
    "models": "list the models Attention Lab knows, or add SmolLM2-135M (a decoder language model)",
    "bench": "measure attention time, TFLOP/s, memory and error per implementation on the CPU or GPU",
    "linear": (
        "linear attention beside softmax: the bracket trick, the causal forms checked against each "
        "other, random features' error, and how many stored pairs each memory recalls"
    ),
    "induction": (
        "train a 1- or 2-layer attention-only transformer on repeated random sequences "
        "and print its checkpoints"
    ),
}


def command(name: str) -> ModuleType:
    """The module that runs ``attention-lab NAME``."""
    return import_module(f"{__name__}.{name.replace('-', '_')}")
