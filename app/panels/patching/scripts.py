"""The Patching panel's steps as scripts over core (see app/panels/scripts.py)."""

from __future__ import annotations

from app.panels.patching.state import TOP, PairState
from app.panels.scripts import Script, hbars, heatmap


def pair_code(s: PairState, *imports: str, runs: bool = False) -> str:
    """Code that loads the model and reads the pair as ``pair``, with the ``direction``;
    ``imports`` are more import lines. Without ``runs`` (the two runs only) it says what a
    patching grid's cells mean."""
    lines = "\n    ".join(
        sorted({"from core.models import load_model", "from core.printing import table", *imports})
    )
    return f"""
    import numpy as np

    {lines}

    model = load_model({s.source!r})  # the decoder the panel loaded: a key, a folder or a cache id
    clean = {s.clean!r}
    corrupt = {s.corrupt!r}
    # The pair as the model reads it: prompts of as many tokens, judged by the metric
    # logit(target) - logit(foil) at the last position.
    pair = prepare(model, clean, corrupt, {s.target!r}, {s.foil!r})
    direction = {s.direction!r}  # denoise: clean activations into the corrupted run; noise: the reverse
    print("The prompts differ at positions", [i + 1 for i in pair.differ])
    """ + (
        ""
        if runs
        else """
    print("Each cell is the metric of one patched run, normalised: 0 = the corrupted run, 1 = the clean run")
    """
    )


def grid_code(name: str, what: str, title: str, head: str = "") -> str:
    """Code that sweeps the ``what`` grid as ``name`` and prints its normalised values."""
    chosen = f", head={head}" if head else ""
    return f"""
    {name} = patch(model, pair, {what!r}, direction{chosen})  # one patched run per cell
    print({title!r})
    print(table({name}.values, {name}.rows, {name}.columns))
    """


def two_runs(s: PairState) -> Script:
    """Step 1: both runs' metrics and most probable next tokens."""
    imports = (
        "from core.interp.ablation import run",
        "from core.maths.attention import softmax",
        "from core.interp.token_text import visible",
        "from core.interp.patching import prepare",
    )
    body = (
        pair_code(s, *imports, runs=True)
        + f"""
    for name, ids in (("Clean", pair.clean), ("Corrupted", pair.corrupt)):
        logits = run(model, ids)[0][-1].astype(np.float64)  # (vocab,) after the last token
        metric = logits[pair.target.id] - logits[pair.foil.id]
        print(f"{{name}} run: logit({{pair.target.text!r}}) - logit({{pair.foil.text!r}}) = {{metric:.6g}}")
        probs = softmax(logits)
        best = np.argsort(-probs)[:{TOP}]  # the {TOP} most probable next tokens
        labels = [visible(model.tokenizer.decode([int(t)])) for t in best] + ["(rest)"]
        shares = [*probs[best], 1 - probs[best].sum()]
        print(table(shares, labels, ["p"]))
    """
    )
    return Script(body, hbars("shares", "labels", "Corrupted run"))


def stream(s: PairState) -> Script:
    """Step 2: the residual stream patched at one (layer, position) at a time; the clicked cell's
    run, its next tokens."""
    imports, picked = ("from core.interp.patching import patch, prepare",), ""
    if s.row:
        imports = (
            "from core.interp.patching import cell_logits, patch, prepare",
            "from core.interp.token_text import visible",
            "from core.maths.attention import softmax",
        )
        picked = f"""
    cell = ({s.row - 1}, {s.column - 1})  # the clicked cell, (row, position) counted from 0
    if cell[0] < len(grid.rows) and cell[1] < len(grid.columns):
        logits = cell_logits(model, pair, "resid", cell, direction)  # (vocab,) of that one run
        probs = softmax(logits.astype(np.float64))
        best = np.argsort(-probs)[:{TOP}]
        print(f"The run of {{grid.rows[cell[0]]}}, position {{grid.columns[cell[1]]}}: its next tokens")
        print(table(probs[best], [visible(model.tokenizer.decode([int(t)])) for t in best], ["p"]))
    """
    body = (
        pair_code(s, *imports)
        + grid_code("grid", "resid", "The clean stream copied in (rows: where, columns: positions)")
        + picked
    )
    return Script(body, heatmap("grid.values", "grid.rows", "grid.columns", "Residual stream"))


def parts(s: PairState) -> Script:
    """Step 3: each layer's attention output and MLP output patched per position."""
    body = (
        pair_code(s, "from core.interp.patching import patch, prepare")
        + grid_code("attention", "attn", "Attention output copied in (rows: layers, columns: positions)")
        + grid_code("mlp", "mlp", "MLP output copied in")
    )
    attention = heatmap("attention.values", "attention.rows", "attention.columns", "Attention output")
    mlp = heatmap("mlp.values", "mlp.rows", "mlp.columns", "MLP output")
    return Script(body, f"{attention}plt.figure()\n{mlp}")


def heads(s: PairState) -> Script:
    """Step 4: every head's output patched, beside the knockout ranking; the chosen head (the
    state's, else the one whose output brings most back) by position."""
    imports = (
        "from core.interp.ranking import rank_by_ablation",
        "from core.interp.patching import patch, prepare",
    )
    chosen = (
        f"head = ({s.layer - 1}, {s.head - 1})  # the chosen head, (layer, head) counted from 0"
        if s.layer
        else "head = tuple(int(k) for k in np.unravel_index(np.argmax(grid.values), grid.values.shape))\n"
        '    print("The head whose output brings most back: layer", head[0] + 1, "head", head[1] + 1)'
    )
    body = (
        pair_code(s, *imports)
        + grid_code(
            "grid", "heads", "Each head's output copied in at every position (rows: layers, columns: heads)"
        )
        + f"""
    # Each head knocked out of the clean run (zero-ablation): the drop in the metric over its size.
    knockout = rank_by_ablation(model, pair.clean, pair.target, pair.foil)
    print("Knockout: the share of the clean metric lost with each head knocked out")
    print(table(knockout.relative_drop, grid.rows, grid.columns))
    {chosen}
    """
        + grid_code(
            "one", "head", "The chosen head's output, query, key, value and pattern by position", "head"
        )
    )
    return Script(body, heatmap("grid.values", "grid.rows", "grid.columns", "Head outputs"))


def approx(s: PairState) -> Script:
    """Step 5: attribution patching's one-pass estimate of the state's grid beside the exact one."""
    what = s.grid
    imports = (
        "from core.interp.attribution import attribute",
        "from core.interp.patching import patch, prepare",
    )
    body = (
        pair_code(s, *imports)
        + f"""
    # Every cell at once: (source - receiving activation) times the metric's gradient.
    estimate = attribute(model, pair, direction).grid({what!r})
    print("One-pass estimate")
    print(table(estimate.values, estimate.rows, estimate.columns))
    """
        + grid_code("exact", what, "Exact (patched runs)")
        + """
    x, y = exact.values.ravel(), estimate.values.ravel()
    print(f"Correlation {np.corrcoef(x, y)[0, 1]:.6g}; largest miss {np.abs(x - y).max():.6g}")
    """
    )
    picture = """
    plt.scatter(x, y)
    plt.axline((0, 0), slope=1, color="grey", linestyle="--")  # where the estimate is exact
    plt.xlabel("exact")
    plt.ylabel("estimate")
    """
    return Script(body, picture)
