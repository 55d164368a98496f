"""The residual stream panel's steps as scripts over core (see app/panels/scripts.py)."""

from __future__ import annotations

from app.panels.scripts import Script, heatmap, lines, model_code
from app.panels.stream.state import SWEEP_POINTS, SteerState, StreamState


def token_code(s: StreamState, *imports: str) -> str:
    """Code that loads the model, reads the prompt and names the token followed, ``position``
    (from 0), and the stream's path, ``journey``."""
    position = "len(ids) - 1  # the last token" if s.position == 0 else f"{s.position - 1}"
    return (
        model_code(s.source, s.prompt, "from core.interp import stream", *imports)
        + f"""
    position = {position}
    print(f"Token {{position + 1}}: {{pieces[position]}}")
    journey = stream.stream_journey(model, ids, position)  # one run, read at every block
    """
    )


def journey(s: StreamState) -> Script:
    """Step 1: the stream's size entering and leaving each block, what attention and the MLP add,
    its cosine with the final stream, and the logit lens after each block."""
    body = (
        token_code(s)
        + """
    rows = journey.rows
    values = np.array([[r.norm_in, r.norm_out, r.attn_norm, r.mlp_norm, r.cos_final] for r in rows])
    print("Each block (sizes are Euclidean norms)")
    print(table(values, layers, ["in", "out", "attn", "MLP", "cos final"]))
    lens = [token_text.visible(model.tokenizer.decode([r.lens_top])) for r in rows]
    print("The logit lens after each block:", " | ".join(lens))
    x = range(1, len(rows) + 1)
    names = ["leaving", "attention adds", "MLP adds"]
    series = {name: (x, values[:, k]) for k, name in enumerate(names, 1)}
    """
    )
    return Script(body, lines("series", "Size of the stream and of what each block adds", "layer", "norm"))


def norm(s: StreamState) -> Script:
    """Step 2: the norm a layer reads the stream through, step by step on the real stream."""
    layer = "model.n_layers  # the final norm" if s.norm == 0 else f"{s.norm - 1}  # layer {s.norm}'s"
    body = (
        token_code(s)
        + f"""
    layer = {layer}
    step = stream.norm_step(model, ids, position, layer)
    print(f"{{step.kind}}: mean {{step.mean:.6g}}, mean square {{step.mean_square:.6g}}")
    print(f"eps {{step.eps:.6g}}")
    print(f"scale 1/sqrt(mean square + eps) = {{step.scale:.6g}}; the gain's mean {{step.gain.mean():.6g}}")
    print(f"against the model's own norm: {{step.module_error:.6g}}")
    print(f"{{stream.SCALED:g}} x the stream changes what is read by {{step.scaled_change:.6g}}")
    centred = step.stream - step.mean if step.kind == "LayerNorm" else step.stream
    read = np.column_stack([centred * step.scale, step.output])
    print("Each dimension: the stream times the scale, then times the gain (what the layer reads)")
    print(table(read, range(len(read)), ["stream x scale", "x gain"]))
    for token, logit in step.top:  # the final norm only: through the unembedding
        print(f"logit of {{model.tokenizer.decode([token])!r}}: {{logit:.6g}}")
    """
    )
    picture = """
    plt.plot(read[:, 0], label="stream x scale")
    plt.plot(read[:, 1], label="x gain: read")
    plt.xlabel("dimension")
    plt.legend()
    """
    return Script(body, picture)


def parts(s: StreamState) -> Script:
    """Step 3: the final stream as a sum of parts, each part's size and direct push on the top
    tokens' logits, grouped."""
    body = (
        token_code(s)
        + f"""
    print(f"|sum of the parts - the final stream| at most {{journey.sum_error:.3g}}")
    effects = stream.direct_effects(model, journey)  # the final norm's scale frozen
    groups = stream.grouped(journey, effects, {s.group!r})
    top = [token_text.visible(model.tokenizer.decode([t])) for t in effects.tokens]
    print("Direct push on each top token's logit")
    print(table(groups.values, groups.names, top))
    print("Size of each part")
    print(table(groups.norms, groups.names, ["norm"]))
    print("They add up to the logits")
    print(table(effects.logits, top, ["logit"]))
    if effects.note:
        print(effects.note)
    """
    )
    return Script(
        body, heatmap("groups.values", "groups.names", "top", "Direct push on each top token's logit")
    )


def steering(s: SteerState) -> Script:
    """Step 4: the normal and the steered completions, and the strength sweep."""
    imports = (
        "from core.interp.ranking import answer_token",
        "from core.interp.steering import greedy, steer, steering_vector, strength_sweep",
    )
    body = (
        model_code(s.source, s.prompt, *imports)
        + f"""
    vector = steering_vector(model, {s.plus!r}, {s.minus!r}, {s.layer - 1}, prefix={s.prefix!r})
    print(f"vector size {{vector.norm:.6g}}; the streams {{vector.stream_norm:.6g}}")
    normal = greedy(model, ids, {s.new})
    steered = greedy(model, ids, {s.new}, steer(vector, {s.strength!r}, {s.mode!r}))
    piece = lambda t: token_text.visible(model.tokenizer.decode([t]))
    for k in range(max(len(normal.ids), len(steered.ids))):
        print(k + 1, *(piece(g.ids[k]) if k < len(g.ids) else "" for g in (normal, steered)))
    print("normal: ", model.tokenizer.decode(list(normal.ids)))
    print("steered:", model.tokenizer.decode(list(steered.ids)))
    """
    )
    if not (s.reach and s.mode == "add"):
        return Script(body)
    token = (
        "normal.ids[0]" if not s.token.strip() else f"answer_token(model.tokenizer, {s.token!r}, prompt).id"
    )
    body += f"""
    token = {token}
    strengths = np.linspace(0.0, {s.reach!r}, {SWEEP_POINTS})
    sweep = strength_sweep(model, ids, vector, strengths, token)
    print(f"The next token by strength (p of {{piece(token)}}, entropy in nats)")
    print(table(np.column_stack([sweep.prob, sweep.entropy]), strengths.round(6), ["p", "entropy"]))
    if sweep.breakdown is not None:
        print(f"The text breaks down near strength {{sweep.strengths[sweep.breakdown]:.6g}}")
    series = {{"p": (strengths, sweep.prob), "entropy": (strengths, sweep.entropy)}}
    """
    return Script(body, lines("series", "The next token by strength", "strength"))
