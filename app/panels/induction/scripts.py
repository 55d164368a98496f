"""The induction panel's steps as scripts over core (see app/panels/scripts.py).

A trained run travels as its settings and the step the panel had reached: the seed fixes the first
weights and every batch, so training again to that step gives the panel's model.
"""

from __future__ import annotations

from dataclasses import fields, replace
from textwrap import indent

from app.panels.induction.state import KnockoutState, TaskState
from app.panels.scripts import Script, bars, heatmap, lines
from core.lab.settings import InductionSettings

# Code: the best induction head of the run's last checkpoint, printed (needs ``checkpoints``).
BEST_HEAD = """\
last = checkpoints[-1]
layer, head = np.unravel_index(last.induction.argmax(), last.induction.shape)
print(
    f"Step {last.step}: repeat loss {last.loss_second:.6g} nats; best induction score "
    f"{last.induction.max():.6g} (layer {layer + 1}, head {head + 1})"
)
"""


def best_head(depth: int) -> str:
    """BEST_HEAD indented ``depth`` levels, to sit in a script's body."""
    return indent(BEST_HEAD, "    " * depth).lstrip()


def settings_code(s: InductionSettings, steps: int) -> str:
    """``InductionSettings(...)`` of the run ``s`` trained to ``steps``, written out in full."""
    trained = replace(s, steps=steps)
    values = ", ".join(f"{f.name}={getattr(trained, f.name)!r}" for f in fields(trained))
    return f"InductionSettings(\n        {values}\n    )"


def reached(name: str, s: InductionSettings, steps: int) -> str:
    """A comment line when the panel's run ``name`` stopped before its last step, else nothing."""
    if steps == s.steps:
        return ""
    return f"\n    # The panel's {name} had reached step {steps} of {s.steps}: trained that far."


def task(s: TaskState) -> Script:
    body = f"""
    from core.lab.data import repeated_sequences
    from core.lab.settings import least_losses
    from core.lab.training import torch_generator
    from core.printing import table

    # The settings at the panel's left: which example, the block length, the vocabulary size V.
    seed, length, vocab = {s.seed}, {s.length}, {s.vocab}
    # One sequence, drawn as training draws its data: a block of random tokens shown twice.
    tokens = repeated_sequences(torch_generator(seed), 1, length, vocab)[0].tolist()
    print("First copy: ", *tokens[:length])
    print("Second copy:", *tokens[length:])

    # The least loss any model can expect at each target: ln V while tokens are new, 0 once copied.
    targets = list(range(1, 2 * length))
    best = least_losses(length, vocab)
    print("The least loss (nats) at each position of the token to predict")
    print(table(best, targets, ["nats"]))
    """
    return Script(body, bars("best", "targets", "The least loss any model can expect", "position", "nats"))


def train(s: InductionSettings, steps: int) -> Script:
    """Step 2 for the run of settings ``s``, trained to ``steps``."""
    body = f"""
    import numpy as np

    from core.lab.settings import InductionSettings, first_formed
    from core.lab.training import InductionRun
    from core.printing import table

    # The training settings; the seed fixes the first weights and every batch.{reached("run", s, steps)}
    settings = {settings_code(s, steps)}
    checkpoints = list(InductionRun(settings).train())  # measured at step 0, every `every` steps, the last
    steps = [c.step for c in checkpoints]
    heads = [f"L{{i + 1}} H{{j + 1}}" for i in range(settings.layers) for j in range(settings.heads)]

    print("Loss per token (nats) on the first copy (random) and the second (repeat)")
    print(table([[c.loss_first, c.loss_second] for c in checkpoints], steps, ["first copy", "repeat"]))
    print("Induction score of each head: its weight on the token after the current token's earlier copy")
    print(table([c.induction.ravel() for c in checkpoints], steps, heads))
    print("Previous-token score of each head: its weight on the token just before")
    print(table([c.previous.ravel() for c in checkpoints], steps, heads))
    formed = first_formed(checkpoints)  # the first checkpoint where a head's induction score passes 0.5
    print("No head passed 0.5." if formed is None else f"A head first passed 0.5 at step {{formed.step}}.")
    {best_head(1)}
    curves = {{
        "first copy": (steps, [c.loss_first for c in checkpoints]),
        "second copy": (steps, [c.loss_second for c in checkpoints]),
    }}
    """
    return Script(body, lines("curves", "Loss per token", "training step", "nats"))


def one_layer(two: tuple[InductionSettings, int], one: tuple[InductionSettings, int]) -> Script:
    """Step 3 for the 2-layer and the 1-layer run, each (settings, steps trained)."""
    body = f"""
    import numpy as np

    from core.lab.settings import InductionSettings
    from core.lab.training import InductionRun
    from core.printing import table

    # The same training with two layers and with one; each seed fixes the first weights and every batch.{
        reached("2-layer run", *two) + reached("1-layer run", *one)
    }
    two_layers = {settings_code(*two)}
    one_layer = {settings_code(*one)}
    runs = {{"2 layers": two_layers, "1 layer": one_layer}}
    curves = {{}}
    for name, settings in runs.items():
        checkpoints = list(InductionRun(settings).train())
        steps = [c.step for c in checkpoints]
        curves[name] = (steps, [c.loss_second for c in checkpoints])
        print(f"{{name}}: loss on the repeated copy (nats) at each step")
        print(table(curves[name][1], steps, ["repeat"]))
        {best_head(2)}
    """
    return Script(body, lines("curves", "Loss on the repeated copy", "training step", "nats"))


def knockout(s: KnockoutState) -> Script:
    """Step 4: the step-2 run as the panel measured it, one head knocked out, the typed text read."""
    run = s.run.settings
    body = f"""
    import numpy as np

    from core.lab.settings import InductionSettings
    from core.lab.training import InductionRun
    from core.printing import table

    # The model of step 2, trained to the step the panel measured (the seed fixes weights and batches).
    settings = {settings_code(run, s.step)}
    run = InductionRun(settings)
    checkpoints = list(run.train())
    layers = [f"layer {{i + 1}}" for i in range(settings.layers)]
    heads = [f"head {{j + 1}}" for j in range(settings.heads)]

    intact = run.measure().loss_second  # the loss on the repeated copy with every head
    losses = run.knockouts()  # (layers, heads): the same with each head's output set to zero in turn
    print(f"Repeat loss with every head: {{intact:.6g}} nats")
    print("Repeat loss without each head")
    print(table(losses, layers, heads))

    # Your sequence, read with every head and with the chosen head knocked out.
    text = {s.text!r}
    layer, head = {s.layer}, {s.head}
    mask = np.ones((settings.layers, settings.heads))
    mask[layer - 1, head - 1] = 0.0  # 0 silences a head
    reading, knocked = run.read(text), run.read(text, mask)
    labels = [str(t) for t in reading.tokens]
    print(f"Layer {{layer}}, head {{head}} reading your sequence: row = query, column = key")
    print(table(reading.weights[layer - 1, head - 1], labels, labels))
    print("The most likely next token and its probability, with every head and without the chosen one")
    guesses = [reading.predicted, reading.confidence, knocked.predicted, knocked.confidence]
    print(table(np.stack(guesses, axis=1), labels, ["next", "p", "without: next", "p"]))
    actual = np.array(reading.tokens[1:])  # the token that does come next
    right, right_without = (reading.predicted[:-1] == actual).sum(), (knocked.predicted[:-1] == actual).sum()
    print(f"Next tokens right: {{right}} of {{len(actual)}} with every head, {{right_without}} without it.")
    """
    return Script(body, heatmap("losses", "layers", "heads", "Repeat loss without each head"))
