"""The Next token panel's steps as scripts over core (see app/panels/scripts.py)."""

from __future__ import annotations

from app.panels.next_token.state import RunState, SamplingState, distribution
from app.panels.scripts import Script, hbars, mosaic_code
from core.interp import prediction
from core.maths import sampling


def picks(g: prediction.Generation, s: SamplingState) -> list[int | None]:
    """Per appended token of ``g``: None when the seed draws it under the settings ``s`` (as the
    panel's draws do), else its id (clicked, or drawn under other settings)."""
    line, at = [], g.before  # the generations ``g`` grew through, the prompt alone first
    while at is not None:
        line.insert(0, at)
        at = at.before
    draws = sampling.Draws(s.seed)
    found: list[int | None] = []
    for k, (before, chosen) in enumerate(zip(line, g.chosen, strict=True)):
        token, _ = draws.draw(distribution(before.logits, s), k)
        found.append(None if token == chosen.id else chosen.id)
    return found


def generation_code(r: RunState, g: prediction.Generation, s: SamplingState, imports: str = "") -> str:
    """Code that rebuilds ``g``, the run of ``r``, as ``generation``: the prompt prefilled, then the
    tokens appended in step 3, drawn with the seed of ``s`` where they were drawn. ``imports``:
    more lines for the top."""
    code = f"""
    {imports}
    from core.interp import prediction
    from core.maths import sampling
    from core.interp.token_text import visible
    from core.models import load_model
    from core.printing import table

    # The decoder and the prompt at the top of the panel.
    model = load_model({r.model.source!r})
    first = prediction.predict(model, {r.prompt!r}, keep_cache=True)  # one prefill, the KV cache kept
    generation = prediction.Generation.start(model, first)
    # Step 2's settings: the temperature, top-k (None: no cut), top-p and the seed of the draws.
    temperature, top_k, top_p, seed = {s.temperature!r}, {s.top_k or None}, {s.top_p!r}, {s.seed}
    listed = {s.listed}  # how many candidates are listed
    """
    if g.chosen:
        code += f"""
    # The tokens appended in step 3: None = drawn with the seed, a token id = clicked in the list.
    picks = {picks(g, s)}
    draws = sampling.Draws(seed)  # one random number per generated position, in turn
    for k, pick in enumerate(picks):
        dist = sampling.reshape(generation.logits, temperature, top_k, top_p)
        token, prob = draws.draw(dist, k) if pick is None else (pick, float(dist.probs[pick]))
        generation = generation.append(token, prob)  # one decode step: the cache holds one more token
    """
    return (
        code
        + """
    pieces = [*generation.prompt.pieces, *(c.piece for c in generation.chosen)]
    print("The text so far, one token per box:", " | ".join(visible(p) for p in pieces))
    """
    )


def candidates_code(dist: str, what: str) -> str:
    """Code that prints the ``listed`` most probable tokens of the distribution ``dist`` and the
    rest as ``labels`` and ``probs``, cut tokens marked."""
    return f"""
    choices, rest = sampling.top({dist}, listed)
    labels = [visible(model.tokenizer.decode([c.id])) + ("" if c.kept else " (cut)") for c in choices]
    labels, probs = [*labels, "(rest)"], [*(c.prob for c in choices), rest]
    print({what!r})
    print(table(probs, labels, ["probability"]))
    """


def predictions(r: RunState, g: prediction.Generation, s: SamplingState) -> Script:
    body = (
        generation_code(r, g, s, "import math\n")
        + """
    plain = sampling.reshape(generation.logits)  # temperature 1, no cuts: the model's own probabilities
    print(f"{generation.length} tokens in, one distribution out over {plain.probs.size} tokens.")
    print(f"Entropy {plain.entropy:.6g} nats (0 = certain, {math.log(plain.probs.size):.6g} = uniform)")
    """
        + candidates_code("plain", "The most probable next tokens")
    )
    return Script(body, hbars("probs", "labels", "Next token: the model's probabilities"))


def sampled_code() -> str:
    """Code that reshapes the next token's distribution by step 2's settings as ``dist`` and prints it."""
    return """
    dist = sampling.reshape(generation.logits, temperature, top_k, top_p)  # softmax(logits / T), cut
    held = dist.probs[dist.kept].sum()
    print(f"{int(dist.kept.sum())} of {dist.probs.size} tokens can be drawn; together they held {held:.6g}")
    print(f"Entropy {dist.entropy:.6g} nats")
    """ + candidates_code("dist", "After the temperature, before renormalising (cut tokens are never drawn)")


def temperature(r: RunState, g: prediction.Generation, s: SamplingState, drawn: int) -> Script:
    """``drawn``: the draws made with the step's button since the run or settings last changed (the
    script shows at least one)."""
    body = (
        generation_code(r, g, s)
        + sampled_code()
        + f"""
    preview = sampling.Draws(seed)  # the button's draws: the seed's numbers in turn
    for n in range({max(drawn, 1)}):
        token, prob = preview.draw(dist)
        print(f"Draw {{n + 1}}: {{visible(model.tokenizer.decode([token]))}}, p = {{prob:.6g}}")
    """
    )
    return Script(body, hbars("probs", "labels", "Next token after the temperature"))


def generate(r: RunState, g: prediction.Generation, s: SamplingState) -> Script:
    body = (
        generation_code(r, g, s)
        + """
    print("Chosen tokens and the probability each had:")
    for step, c in enumerate(generation.chosen, 1):
        print(f"  {step}. {visible(c.piece)}  {c.prob:.6g}")
    """
        + sampled_code()
    )
    return Script(body, hbars("probs", "labels", "Candidates for the next token"))


def kv_cache(r: RunState, g: prediction.Generation, s: SamplingState) -> Script:
    body = (
        generation_code(r, g, s, "import numpy as np\n    from core.interp import decode_timing, kv_cache")
        + """
    # What every layer keeps: one row per layer, one column per cached token; the map shades the
    # tokens from the prompt (prefill) 1, those from decode steps 0.55, and those a sliding-window
    # layer has let go 0 (it keeps only the last window - 1).
    size = kv_cache.cache_size(model, generation.length)
    cached = kv_cache.kept_cells(size, len(generation.prompt.ids))
    rows = [f"{k + 1} sliding" if k in model.sliding else str(k + 1) for k in range(model.n_layers)]
    print(table(cached, rows, [visible(p) for p in pieces]))

    # The cache's size in float32, with shared key/value heads and with one per query head.
    print(f"Per token: 2 (keys, values) × {model.n_layers} layers × {model.n_kv_heads} key/value heads")
    print(f"  × {model.head_dim} values × 4 bytes = {size.per_token} bytes")
    print(f"  ({size.per_token_full} bytes with a key/value head per query head)")
    mib_now = np.array([size.total, size.total_full]) / 2**20
    print(f"At {size.tokens} tokens: {mib_now[0]:.6g} MiB; {mib_now[1]:.6g} MiB without sharing")
    lengths, mib = kv_cache.size_curve(model)
    print(table(mib, [f"{n:.6g} tokens" for n in lengths], ["MiB, this model", "MiB, full multi-head"]))

    # One decode step timed with the cache and without it (the whole text run again): medians of 5.
    timing = decode_timing.time_decode(model, generation.ids, generation.length)
    print(f"With the cache {1000 * timing.cached:.3g} ms, without {1000 * timing.uncached:.3g} ms")
    """
    )
    picture = """
    plt.plot(lengths, mib[:, 0], label="this model (shared key/value heads)")
    plt.plot(lengths, mib[:, 1], "--", label="full multi-head")
    plt.plot([size.tokens], mib_now[:1], "o")
    plt.xlabel("tokens")
    plt.ylabel("MiB")
    plt.title("KV cache size (float32)")
    plt.legend()
    """
    return Script(body, picture)


def groups(source: str, prompt: str, layer: int) -> Script:
    body = f"""
    from core.interp import kv_cache, prediction
    from core.interp.token_text import visible
    from core.maths.head_tiles import head_tiles
    from core.models import load_model
    from core.printing import table

    # The decoder and the prompt at the top of the panel; every head's weights over the prompt.
    model = load_model({source!r})
    first = prediction.predict(model, {prompt!r})
    tokens = [visible(p) for p in first.pieces]
    layer = {layer}  # counted from 0 (the panel counts from 1)
    groups = kv_cache.query_groups(model.n_heads, model.n_kv_heads)  # the query heads of each kv head
    for kv, heads in enumerate(groups):
        print(f"Key/value head {{kv + 1}} ← query heads {{', '.join(str(h + 1) for h in heads)}}")
    # One row of tiles per key/value head, one column per query head that reads it.
    tiles = head_tiles(first.attentions[layer][groups])  # (kv heads, query heads each, T, T)
    picture = tiles.mosaic()  # one image, NaN between the tiles
    """ + mosaic_code(
        'f"Query head {k + 1} of each group, key/value head 1 on top; rows numbered as in the picture"'
    )
    picture = """
    plt.imshow(picture, cmap="viridis", vmin=0, vmax=1)
    plt.xlabel("query heads of a group")
    plt.ylabel("key/value heads")
    plt.title(f"Layer {layer + 1}: heads that share keys and values")
    """
    return Script(body, picture)
