"""The Inside a decoder panel's steps as scripts over core (see app/panels/scripts.py)."""

from __future__ import annotations

from app.panels.inside_decoder.script_parts import (
    ablation_imports,
    answers_code,
    knocked_code,
    top_code,
)
from app.panels.inside_decoder.state import InductionState, KnockState, LensState, SinkState
from app.panels.scripts import Script, hbars, heatmap, model_code


def knock_out(s: KnockState) -> Script:
    """Step 1: the prediction with every head and without the knocked-out ones."""
    named = bool(s.target.strip() and s.foil.strip())
    imports = ("from core.interp.ablation import ablated, next_token_probs", *ablation_imports(s.mode))
    if named:
        imports += ("from core.interp.ranking import answer_token",)
    body = model_code(s.source, s.prompt, *imports) + knocked_code(s.heads, s.mode, s.first)
    body += (
        """
    grid = np.zeros((model.n_layers, model.n_heads))  # 1 marks a knocked-out head
    for layer, head in knocked:
        grid[layer, head] = 1
    print("Knocked-out heads (rows: layers, columns: heads)")
    print(table(grid, layers, heads))

    every = next_token_probs(model, ids)  # (vocab,) every head in place
    with ablated(model, knocked, mode, means, first):  # the hooks go on leaving
        without = next_token_probs(model, ids)
    """
        + top_code()
        + """
    labels, shares = top("Every head", every)
    labels_without, shares_without = top("Without the knocked-out heads", without)
    """
    )
    if named:
        body += (
            answers_code(s.target, s.foil)
            + """
    print(f"p({token_text.visible(target.text)}): {every[target.id]:.6g} -> {without[target.id]:.6g}")
    before, after = (np.log(p[target.id]) - np.log(p[foil.id]) for p in (every, without))
    print(f"logit({target.text!r}) - logit({foil.text!r}): {before:.6g} -> {after:.6g}")
    """
        )
    picture = hbars("shares", "labels", "Every head") + hbars(
        "shares_without", "labels_without", "Without the knocked-out heads"
    )
    return Script(body, picture)


def which_heads(s: KnockState, looking: bool) -> Script:
    """Step 2: every head knocked out alone, ranked by the drop in the logit difference; and, when
    the target occurs earlier (``looking``), the last token's weight on it."""
    if not (s.target.strip() and s.foil.strip()):
        ask = '\n    print("Name a target and a foil token to rank the heads, e.g. Mary and John.")\n'
        return Script(model_code(s.source, s.prompt) + ask)
    imports = (
        "from core.interp.ablation import run",
        "from core.interp.ranking import answer_token, rank_by_ablation, rank_by_attention",
        *ablation_imports(s.mode),
    )
    body = model_code(s.source, s.prompt, *imports) + knocked_code(s.heads, s.mode, s.first)
    body += (
        answers_code(s.target, s.foil)
        + """
    # Every head knocked out alone, in turn (the heads knocked out above are only marked on screen).
    ranking = rank_by_ablation(model, ids, target, foil, mode, means, first=first)
    print(f"Clean logit difference: {ranking.clean:.6g}")
    print("Drop in the logit difference with each head knocked out (rows: layers, columns: heads)")
    print(table(ranking.drop, layers, heads))
    for k, h in enumerate(ranking.ranking.ranked(5), 1):
        print(f"{k}. layer {h.layer + 1}, head {h.head + 1}: {h.score:.6g}")
    """
    )
    if looking:
        body += """
    _, attentions = run(model, ids, attentions=True)  # (layers, heads, T, T)
    looking = rank_by_attention(attentions, ids, target)  # last token -> the target's earlier copy
    print(f"The {looking.what}")
    print(table(looking.scores, layers, heads))
    """
    return Script(body, heatmap("ranking.drop", "layers", "heads", "Drop in logit difference"))


def lens(s: LensState) -> Script:
    """Step 3: the logit lens, the top token after every layer at every position."""
    named = bool(s.target.strip())
    imports = ("from core.interp.lens import logit_lens",)
    if named:
        imports += ("from core.interp.ranking import answer_token",)
    body = model_code(s.source, s.prompt, *imports)
    if named:
        body += f"""
    target = answer_token(model.tokenizer, {s.target!r}, prompt)
    """
    body += f"""
    # After every layer, the stream read through the final norm and the unembedding.
    lens = logit_lens(model, ids, {"target.id" if named else "None"})
    print("Top token after each layer (rows: layers, columns: positions)")
    for layer, row in zip(layers, lens.top_ids):
        print(layer, " | ".join(token_text.visible(p) for p in token_text.pieces(model, row)))
    print("Its probability")
    print(table(lens.top_probs, layers, pieces))
    """
    if named:
        body += """
    print(f"{token_text.visible(target.text)} at the last position after each layer (rank 1 = top)")
    print(table(np.column_stack([lens.target_rank, lens.target_prob]), layers, ["rank", "p"]))
    """
    return Script(body, heatmap("lens.top_probs", "layers", "pieces", "Top token's probability"))


def sinks(s: SinkState) -> Script:
    """Step 4: each head's mean weight on the first token, and the prediction without it."""
    imports = (
        "from core.interp.ablation import run",
        "from core.interp.sinks import sink_scores, without_first_token",
    )
    body = (
        model_code(s.source, s.prompt, *imports)
        + """
    _, attentions = run(model, ids, attentions=True)  # (layers, heads, T, T)
    scores = sink_scores(attentions)  # the later tokens' mean weight on the first
    print("Mean weight on the first token (rows: layers, columns: heads)")
    print(table(scores, layers, heads))

    dropped = without_first_token(model, ids)  # the prediction with and without it
    """
        + top_code()
        + """
    top("Whole prompt", dropped.full)
    labels, shares = top("First token dropped", dropped.dropped)
    print(f"Dropping it moves {dropped.total_variation():.6g} of the probability")
    """
    )
    return Script(body, heatmap("scores", "layers", "heads", "Mean weight on the first token"))


def induction(s: InductionState) -> Script:
    """Step 5: induction and previous-token scores on random tokens repeated twice, and the loss
    at each target with every head and without the knocked-out ones."""
    imports = ("from core.interp.induction import induction_test, random_induction_test",)
    if s.heads:
        imports += ablation_imports(s.mode)
    body = (
        model_code(s.source, None, *imports)
        + f"""
    n, seed = {s.n}, {s.seed}  # random tokens in one copy; the seed that draws them
    test = random_induction_test(model, n, seed)  # the copies, every head
    print("Induction score: mean weight from n + k to k + 1 (rows: layers, columns: heads)")
    print(table(test.induction, layers, heads))
    print("Previous-token score: mean weight from i to i - 1")
    print(table(test.previous, layers, heads))
    targets = [str(p + 1) for p in range(len(test.losses))]  # the target token's position
    losses = [test.losses]
    print(f"Loss on the first copy {{test.loss_first:.6g}}, on the second {{test.loss_second:.6g}} nats")
    """
    )
    columns = '["every head"]'
    if s.heads:
        body += (
            knocked_code(s.heads, s.mode, s.first)
            + """
    without = induction_test(model, test.ids, knocked, mode, means, first)
    losses.append(without.losses)
    print(f"Knocked out: first copy {without.loss_first:.6g}, second {without.loss_second:.6g} nats")
    """
        )
        columns = '["every head", "knocked out"]'
    body += f"""
    print("Loss at each target (nats)")
    print(table(np.column_stack(losses), targets, {columns}))
    """
    picture = f"""
    for loss, name in zip(losses, {columns}):
        plt.plot(range(1, len(loss) + 1), loss, label=name)
    plt.axvline(test.boundary, color="grey", linestyle="--")  # where the second copy starts
    plt.xlabel("target position")
    plt.ylabel("loss (nats)")
    plt.legend()
    """
    return Script(body, picture)
