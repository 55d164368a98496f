"""The Inside a head panel's steps as scripts over core (see app/panels/scripts.py)."""

from __future__ import annotations

from app.panels.inside_head.state import HeadState
from app.panels.scripts import Script, hbars, heatmap
from core.models import DECODER


def cell_code(s: HeadState, kind: str, *imports: str) -> str:
    """Code that loads the model, records one run of the prompt as ``rec`` and names the cell
    (``layer``, ``head``, ``query``, ``key``, from 0) and the tokens' ``labels``; ``imports`` are
    more import lines."""
    lines = "\n    ".join(
        sorted(
            {
                "from core.interp import head as inside",
                "from core.interp.token_text import pieces, visible",
                "from core.models import load_model",
                "from core.printing import table",
                *imports,
            }
        )
    )
    if kind == DECODER:
        ids = "ids, dropped = encode(model, prompt)  # past the context: the first and last tokens"
        lines += "\n    from core.interp.prediction import encode"
    else:
        ids = 'ids = model.tokenizer(prompt, truncation=True, max_length=model.max_tokens)["input_ids"]'
    query = "len(ids) - 1  # the last token" if s.query == 0 else f"{s.query - 1}"
    shown = f"layer {s.layer}, head {s.head}, query {s.query or 'last'}, key {s.key}"
    return f"""
    import numpy as np

    {lines}

    model = load_model({s.source!r})  # the model the panel loaded: a key, a folder or a cache id
    prompt = {s.prompt!r}
    {ids}
    labels = [visible(p) for p in pieces(model, ids)]
    rec = inside.record(model, ids)  # one run: every layer's q, k, v, weights (and streams)
    # The cell counted from 0 (on screen: {shown}).
    layer, head = {s.layer - 1}, {s.head - 1}
    query = {query}
    key = {s.key - 1}
    """


def real_head(s: HeadState, kind: str) -> Script:
    """Step 1: the head's weights, and q·k, the scaling, the softmax and the output for the cell."""
    body = (
        cell_code(s, kind)
        + """
    weights = rec.weights[layer][head].numpy()  # (T, T) row = query, column = key
    print(f"Weights of layer {layer + 1}, head {head + 1} (rows: queries, columns: keys)")
    print(table(weights, labels, labels))
    step = inside.head_step(rec, layer, head, query, key)
    print(f"query {query + 1} {labels[query]} -> key {key + 1} {labels[key]}:")
    print(f"q.k = {step.dot:.6g}, times the scale {step.scale:.6g} = score {step.score:.6g}")
    print(f"softmax over the row: weight {step.weight:.6g}")
    if step.masked:
        print(f"{step.hidden}: the mask adds -inf to its score, so its weight is 0")
    print("q, k and the output (the row's weighted sum of the values), by dimension")
    dims = [str(d) for d in range(step.q.size)]
    print(table(np.column_stack([step.q, step.k, step.output]), dims, ["q", "k", "output"]))
    """
    )
    return Script(body, heatmap("weights", "labels", "labels", "Weights of this head"))


def not_read(why_not: str, s: HeadState, kind: str) -> Script:
    """A step that this model cannot show: the script says why."""
    return Script(
        cell_code(s, kind)
        + f"""
    print({why_not!r})
    """
    )


def why_here(s: HeadState, kind: str, why_not: str) -> Script:
    """Step 2: the score split into query-part times key-part terms."""
    if why_not:
        return not_read(why_not, s, kind)
    body = (
        cell_code(s, kind)
        + """
    # The norm's scale frozen: the score is an exact sum of query part x key part terms.
    split = inside.why_here(rec, layer, head, query, key)
    print(f"Score {split.score:.6g}: query parts add to {split.query_totals.sum():.6g}")
    print("Query side: each part's share")
    print(table(split.query_totals, split.query_parts, ["share"]))
    print("Key side: each part's share")
    print(table(split.key_totals, split.key_parts, ["share"]))
    print("Largest terms")
    for a, b, value in split.largest(8):
        print(f"{a} x {b}: {value:.6g}")
    """
    )
    return Script(body, hbars("split.key_totals", "split.key_parts", "Key side: each part's share"))


def writes(s: HeadState, kind: str, why_not: str) -> Script:
    """Step 3: the tokens the head's output pushes up and down, and its copy of the key's token."""
    if why_not:
        return not_read(why_not, s, kind)
    body = (
        cell_code(s, kind)
        + """
    # The head's output at the query, through the frozen final norm and the unembedding.
    writes = inside.what_it_writes(rec, layer, head, query, key)
    for name, side in (("Pushed up", writes.up), ("Pushed down", writes.down)):
        print(name)
        print(table([v for _, v in side], [visible(model.tokenizer.decode([t])) for t, _ in side], ["logit"]))
    token = visible(model.tokenizer.decode([writes.key_token]))
    print(f"Each key's value path on the logit of {token}")
    positions = [str(p + 1) for p in range(len(writes.paths))]
    print(table(writes.paths, positions, ["logit change"]))
    print(f"Through key {key + 1} it adds {writes.copy:.6g}; its whole output {writes.whole:.6g}")
    print(f"{token} ranks {writes.rank} among everything the head pushes")
    """
    )
    picture = """
    plt.bar(positions, writes.paths)
    plt.xlabel("key position")
    plt.ylabel("logit change")
    plt.title("Each key's value path on the key token")
    """
    return Script(body, picture)


def direct(s: HeadState, kind: str, why_not: str) -> Script:
    """Step 4: every head's and MLP's direct share of the logit difference, beside the drop when
    each head is knocked out."""
    if why_not:
        return not_read(why_not, s, kind)
    if not (s.target.strip() and s.foil.strip()):
        return not_read("Name a target and a foil token, e.g. Mary and John.", s, kind)
    imports = ("from core.interp.ranking import answer_token, rank_by_ablation",)
    body = (
        cell_code(s, kind, *imports)
        + f"""
    target = answer_token(model.tokenizer, {s.target!r}, prompt)  # a word continuing the prompt
    foil = answer_token(model.tokenizer, {s.foil!r}, prompt)
    shares = inside.direct_shares(rec, target.id, foil.id)  # the final norm's scale frozen
    print(f"logit({{target.text!r}}) - logit({{foil.text!r}}) = {{shares.logit_difference:.6g}}")
    print(f"The shares add to {{shares.values.sum():.6g}}")
    layers = [str(k + 1) for k in range(rec.layers)]
    columns = [str(h + 1) for h in range(rec.heads)] + ["MLP"]
    grid = np.column_stack([shares.heads, shares.mlps])
    print("Direct share (rows: layers, columns: heads, then the MLP)")
    print(table(grid, layers, columns))
    for name, value in zip(shares.names, shares.values):
        if not name.startswith("L"):  # the embeddings and the biases
            print(f"{{name}}: {{value:.6g}}")
    """
    )
    if s.knockout:
        body += """
    knockout = rank_by_ablation(model, ids, target, foil)  # each head knocked out alone
    print("Drop when knocked out")
    print(table(knockout.drop, layers, columns[:-1]))
    """
    return Script(body, heatmap("grid", "layers", "columns", "Direct share"))
