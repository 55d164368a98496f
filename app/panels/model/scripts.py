"""The Real model panel's steps as scripts over core (see app/panels/scripts.py)."""

from __future__ import annotations

from app.panels.model.state import RunState, ViewState
from app.panels.scripts import Script, heatmap, mosaic_code


def run_code(run: RunState, view: ViewState, names: tuple[str, ...] = (), more: tuple[str, ...] = ()) -> str:
    """Code that runs the model on the texts as ``attention`` (layers, heads, T, T) with the
    view's options, and labels each token ``tokens`` ("position text"). ``names``: more to import
    from core.maths.head_analysis; ``more``: more import lines."""
    imports = [
        f"from core.maths.head_analysis import {', '.join(('express', *names))}",
        "from core.models import load_model, run",
        "from core.printing import table",
        *more,
    ]
    top = "\n    ".join(imports)  # indented as the lines below, which are dedented together
    return f"""
    {top}

    # The model and the texts at the top of the panel.
    model = load_model({run.model.source!r})
    raw = run(model, {run.text!r}, {run.text_b!r})  # every head's weights
    # The options above the views re-express the weights; the model does not run again.
    words, hide_special, rescale, part = {view.words}, {view.hide_special}, {view.rescale}, {view.part!r}
    attention = express(raw, words, hide_special, rescale, part)
    n_layers, n_heads, T, _ = attention.shape  # attention.attentions: (layers, heads, T, T)
    tokens = [f"{{k}} {{label}}" for k, label in enumerate(attention.labels)]  # position and text
    """


def head_code(layer: int, head: int) -> str:
    """Code that prints one head's weights as ``weights`` (T, T)."""
    return f"""
    layer, head = {layer}, {head}  # the head shown, counted from 0 (the panel counts from 1)
    weights = attention.attentions[layer, head]  # row = the token that looks
    print(f"Layer {{layer + 1}}, head {{head + 1}}: row = the token that looks, column = the token looked at")
    print(table(weights, tokens, tokens))
    """


def head_picture(layer: int, head: int) -> str:
    return heatmap("weights", "tokens", "tokens", f"layer {layer + 1}, head {head + 1}")


def lines_script(
    run: RunState,
    view: ViewState,
    layer: int,
    heads: list[int],
    names: tuple[str, ...] = (),
    before: str = "",
) -> Script:
    """The head view: the shown heads of ``layer`` as lines from each token to those it weights;
    ``before`` prints more first."""
    body = (
        run_code(run, view, names)
        + before
        + f"""
    layer, heads = {layer}, {heads}  # the layer and the heads whose lines are shown, from 0
    for head in heads:
        print(f"Layer {{layer + 1}}, head {{head + 1}}: a line from row to column, as opaque as its weight")
        print(table(attention.attentions[layer, head], tokens, tokens))
    """
    )
    picture = """
    for head in heads:  # one colour per head; a line's opacity is its weight
        w = attention.attentions[layer, head]
        for i in range(T):
            for j in range(T):
                if w[i, j] >= 0.02:  # lighter lines would be invisible
                    plt.plot([0, 1], [i, j], color=f"C{head % 10}", alpha=float(w[i, j]))
    plt.yticks(range(T), tokens)
    plt.gca().invert_yaxis()
    plt.title(f"Layer {layer + 1}: the head view")
    plt.tight_layout()
    """
    return Script(body, picture)


def tokens(run: RunState, view: ViewState, layer: int, head: int) -> Script:
    body = (
        run_code(run, view)
        + """
    print(f"{model.name}: {n_layers} layers × {n_heads} heads, {len(raw.tokens)} tokens")
    print("The tokenizer's pieces:", " | ".join(raw.tokens))
    """
        + head_code(layer, head)
    )
    return Script(body, head_picture(layer, head))


def head_view(run: RunState, view: ViewState, layer: int, heads: list[int]) -> Script:
    return lines_script(run, view, layer, heads)


def model_view(run: RunState, view: ViewState) -> Script:
    body = (
        run_code(run, view, more=("from core.maths.head_tiles import head_tiles",))
        + """
    tiles = head_tiles(attention.attentions)  # every head as a tile; block means past 64 tokens
    picture = tiles.mosaic()  # rows of tiles = layers, columns = heads, NaN between tiles
    """
        + mosaic_code('f"Head {k + 1} in every layer, layer 1 on top; rows numbered as in the picture"')
    )
    picture = """
    plt.imshow(picture, cmap="viridis", vmin=0, vmax=1)
    plt.xlabel("heads")
    plt.ylabel("layers")
    plt.title("Every head of the model")
    """
    return Script(body, picture)


def find_head(run: RunState, view: ViewState, layer: int, head: int, pair: tuple[int, int]) -> Script:
    """``pair``: the From and To positions chosen in the step's box."""
    body = (
        run_code(run, view, ("find_head",))
        + f"""
    i, j = {pair[0]}, {pair[1]}  # From and To: the token that looks and the token it looks at
    ranking = find_head(attention, i, j)  # every head scored by the weight row i puts on column j
    print(f"{{ranking.what}}: the best head is {{ranking.best.label}}, weight {{ranking.best.score:.6g}}")
    for score in ranking.ranked(10):
        print(f"  {{score.label}}: {{score.score:.6g}}")
    """
        + head_code(layer, head)
    )
    return Script(body, head_picture(layer, head))


def patterns(run: RunState, view: ViewState, layer: int, heads: list[int]) -> Script:
    ranks = """
    for key, (title, _) in PATTERNS.items():  # the head most like each pattern, then the runners-up
        try:
            ranked = find_pattern(attention, key).ranked(4)
        except ValueError as why:  # e.g. no word occurs twice
            print(f"{title}: {why}")
            continue
        print(f"{title}: " + ", ".join(f"{s.label} ({s.score:.6g})" for s in ranked))
    """
    return lines_script(run, view, layer, heads, ("PATTERNS", "find_pattern"), ranks)
