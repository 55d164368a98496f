"""The Head atlas panel's steps as scripts over core (see app/panels/scripts.py)."""

from __future__ import annotations

from app.panels.atlas.state import AtlasState
from app.panels.scripts import Script, heatmap, model_code


def atlas_code(s: AtlasState, *imports: str) -> str:
    """Code that loads the model, scores every head on the two probes as ``atlas`` and names the
    chosen head (``layer``, ``head``, from 0)."""
    return (
        model_code(s.source, None, "from core.interp import atlas as atlases", *imports)
        + f"""
    text = {s.text!r}
    atlas = atlases.head_atlas(model, text, n={s.length}, seed={s.seed}, low={s.low})  # two runs
    layer, head = {s.layer - 1}, {s.head - 1}  # on screen: layer {s.layer}, head {s.head}
    """
    )


def direct_code(s: AtlasState) -> str:
    """Code that prints each head's direct share of logit(target) − logit(foil) after the answer's
    prompt, when the state names a target and a foil."""
    if not (s.target.strip() and s.foil.strip()):
        return ""
    return f"""
    if model.kind == "decoder":  # an encoder has no logits to share out
        answer = {s.answer!r}
        answer_ids = prediction.encode(model, answer)[0]
        target, foil = (answer_token(model.tokenizer, t, answer).id for t in ({s.target!r}, {s.foil!r}))
        shares = inside.direct_shares(inside.record(model, answer_ids), target, foil)  # final norm frozen
        print("Each head's direct share of logit(target) - logit(foil) (rows: layers, columns: heads)")
        print(table(shares.heads, layers, heads))
    """


def maps(s: AtlasState) -> Script:
    """Step 1: every score of every head, the heads sorted by one, and each head's direct share."""
    imports = ("from core.interp import head as inside", "from core.interp import prediction",
               "from core.interp.ranking import answer_token")  # fmt: skip
    body = (
        atlas_code(s, *imports)
        + direct_code(s)
        + f"""
    for name, scores in atlas.scores.items():
        print(name, "(rows: layers, columns: heads)")
        print(table(scores, layers, heads))
    for name, why in atlas.missing.items():
        print(f"No {{name}} score: {{why}}")
    scores = atlas.scores.get({s.score!r}, np.zeros((0, 1)))
    order = np.argsort(-scores, axis=None)[:{12}]
    print("The heads with the highest {s.score} score")
    for k in order:
        print(f"L{{k // scores.shape[1] + 1}} H{{k % scores.shape[1] + 1}} {{scores.flat[k]:.6g}}")
    """
    )
    return Script(body, heatmap(f"atlas.scores[{s.score!r}]", "layers", "heads", s.score))


def probes(s: AtlasState) -> Script:
    """Step 2: the head's weights on both probes."""
    body = (
        atlas_code(s, "from core.interp import token_text")
        + """
    piece = lambda t: token_text.visible(model.tokenizer.decode([t]))
    for name, ids, weights in (("the text", atlas.text_ids, atlas.text_weights),
                               ("random tokens, repeated", atlas.repeat_ids, atlas.repeat_weights)):
        labels = [piece(t) for t in ids]
        print(f"Layer {layer + 1}, head {head + 1} on {name} (rows: queries, columns: keys)")
        print(table(weights[layer, head], labels, labels))
    for name in ("previous_token", "first_token", "self", "duplicate_token", "induction"):
        print(f"{name}: {atlas.scores[name][layer, head]:.6g}" if name in atlas.scores else
              f"no {name} score: {atlas.missing[name]}")
    """
    )
    return Script(
        body, heatmap("atlas.repeat_weights[layer, head]", "labels", "labels", "On the repeated tokens")
    )


def cloud(s: AtlasState) -> Script:
    """Step 3: the head's queries and keys projected together to 2-D."""
    heads = "range(head - head % group, head - head % group + group)" if s.together else "[head]"
    body = (
        atlas_code(s)
        + f"""
    group = model.n_heads // model.n_kv_heads
    chosen = list({heads})  # {"every head sharing these keys" if s.together else "the head alone"}
    cloud = atlases.qk_cloud(atlas, layer, chosen)
    print(f"Keys shifted by a vector of size {{np.linalg.norm(cloud.shift):.6g}}; "
          f"queries x {{cloud.scale:.6g}}, keys / {{cloud.scale:.6g}}")
    kinds = np.where(cloud.is_query, "query", "key")
    probes = np.array(["text", "repeat"])[cloud.probe]
    rows = [f"{{k}} {{p}} {{t + 1}} head {{h + 1}}"
            for k, p, t, h in zip(kinds, probes, cloud.position, cloud.head)]
    print(table(cloud.points, rows, ["x", "y"]))
    """
    )
    picture = """
    plt.scatter(*cloud.points[cloud.is_query].T, s=8, label="queries")
    plt.scatter(*cloud.points[~cloud.is_query].T, s=8, marker="s", label="keys")
    plt.axis("equal")
    plt.legend()
    """
    return Script(body, picture)


def copies(s: AtlasState) -> Script:
    """Step 4: the head's OV circuit fed one token, and the strongest directions of W_O W_V."""
    body = (
        atlas_code(
            s, "from core.interp.ranking import answer_token", "from core.interp.token_text import visible"
        )
        + f"""
    if "copying" in atlas.missing:
        raise SystemExit(f"Nothing to read out: {{atlas.missing['copying']}}")
    token = answer_token(model.tokenizer, {s.token!r})  # the token the head reads
    ov = atlases.ov_reading(model, layer, head, token.id)
    piece = lambda t: visible(model.tokenizer.decode([t]))
    print(f"Copying score: {{atlas.scores['copying'][layer, head]:.6g}}")
    print(f"Reading {{piece(token.id)}}, it writes (logits through the unembedding):")
    print(table(ov.out_logits, [piece(t) for t in ov.out_tokens], ["logit"]))
    print(f"{{piece(token.id)}} itself ranks {{ov.source_rank}}")
    for size, reads, writes in zip(ov.singular, ov.reads, ov.writes):
        print(f"direction of size {{size:.6g}}: reads", *map(piece, reads[:4]))
        print("  and writes", *map(piece, writes[:4]))
    """
    )
    return Script(body)
