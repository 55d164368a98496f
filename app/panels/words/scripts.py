"""The Which words mattered panel's steps as scripts over core (see app/panels/scripts.py)."""

from __future__ import annotations

from app.panels.scripts import Script, heatmap, model_code
from app.panels.words.state import WordsState


def answer_code(s: WordsState, *imports: str) -> str:
    """Code that loads the model, reads the prompt and names the ``answer`` the scores explain."""
    imports = (
        "from core.interp import token_scores as ts",
        "from core.interp.ablation import next_token_probs",
        "from core.interp.ranking import answer_token",
        *imports,
    )
    if s.target.strip():
        target = f"answer_token(model.tokenizer, {s.target!r}, prompt).id"
    else:
        target = "int(np.argmax(next_token_probs(model, ids)))  # the model's top next token"
    foil = (
        f"answer_token(model.tokenizer, {s.foil!r}, prompt).id" if s.foil.strip() else "None  # log p(target)"
    )
    return (
        model_code(s.source, s.prompt, *imports)
        + f"""
    answer = ts.Answer({target}, {foil})
    print("The answer:", answer.kind)
    """
    )


def last_row_code(s: WordsState) -> str:
    """Code that names ``patterns`` (every head's weights) and ``last``, the last token's row in
    the state's layer (one head, or their mean)."""
    layer = "model.n_layers - 1  # the last" if s.layer == 0 else f"{s.layer - 1}"
    rows = "patterns[layer, :, -1]" if s.head == 0 else f"patterns[layer, {s.head - 1} : {s.head}, -1]"
    return f"""
    patterns = ts.attention_rows(model, ids)  # (layers, heads, T, T)
    layer = {layer}
    last = {rows}.mean(0)
    """


def baseline_code(s: WordsState) -> str:
    """The baseline argument of integrated gradients: a token's id, or None for a zero input."""
    return f"answer_token(model.tokenizer, {s.baseline!r}).id" if s.baseline.strip() else "None"


def attention(s: WordsState) -> Script:
    """Step 1: the last token's weights in one layer, and rollout with and without the first token."""
    body = (
        answer_code(s)
        + last_row_code(s)
        + """
    strips = np.vstack([last, ts.rollout(patterns), ts.rollout(patterns, drop_first=True)])
    print("The last token's weights in layer", layer + 1, "then rollout, with and without the first token")
    print(table(strips, ["attention", "rollout", "rollout, first left out"], pieces))
    """
    )
    return Script(
        body, heatmap("strips", '["attention", "rollout", "without first"]', "pieces", "Where it looks")
    )


def gradients(s: WordsState) -> Script:
    """Step 2: gradient × input and integrated gradients, with its completeness gap."""
    baseline = baseline_code(s)
    body = (
        answer_code(s)
        + f"""
    gxi, metric = ts.grad_x_input(model, ids, answer)
    ig = ts.integrated_gradients(model, ids, answer, steps={s.steps}, baseline={baseline})
    print(f"metric {{metric:.6g}}; at the baseline {{ig.baseline_metric:.6g}}")
    print(f"the scores add up to {{ig.scores.sum():.6g}}: completeness gap {{ig.gap:.6g}}")
    strips = np.vstack([gxi, ig.scores])
    print(table(strips, ["gradient x input", "integrated gradients"], pieces))
    """
    )
    if s.settles:
        body += f"""
    gaps = ts.gap_by_steps(model, ids, answer, baseline={baseline})  # at each of ts.GAP_STEPS steps
    print(table(gaps, [str(k) for k in ts.GAP_STEPS], ["completeness gap"]))
    """
    return Script(body, heatmap("strips", '["gradient x input", "IG"]', "pieces", "Gradients"))


def occlusion(s: WordsState) -> Script:
    """Step 3: each token taken away, and the next tokens without the chosen one."""
    body = (
        answer_code(s)
        + f"""
    drops = ts.occlusion(model, ids, answer)  # one run per token, its input set to zero
    print("The answer's drop without each token")
    print(table(drops, pieces, ["drop"]))
    probs = next_token_probs(model, ids)
    top = np.argsort(-probs)[:5]
    removed = {s.removed - 1} if {s.removed} <= len(ids) else -1  # from 0; -1: none (or past the end)
    columns = [probs[top]]
    if removed >= 0:
        gone = ts.without(model, ids, removed)
        top = np.array(list(dict.fromkeys([*top, *np.argsort(-gone)[:5]])))  # the top of either
        columns = [probs[top], gone[top]]
    names = [token_text.visible(model.tokenizer.decode([int(t)])) for t in top]
    print("The next tokens" + (f" with and without token {{removed + 1}}" if removed >= 0 else ""))
    print(table(np.column_stack(columns), names, ["p", "without it"][: len(columns)]))
    """
    )
    picture = """
    plt.bar(range(len(drops)), drops)
    plt.xticks(range(len(pieces)), pieces, rotation=90)
    plt.title("The answer's drop without each token")
    plt.tight_layout()
    """
    return Script(body, picture)


def agreement(s: WordsState) -> Script:
    """Step 4: Spearman's correlation of every pair of methods, and two methods against each other."""
    body = (
        answer_code(s)
        + last_row_code(s)
        + f"""
    methods = {{
        "attention": last,
        "rollout": ts.rollout(patterns),
        "gradxinput": ts.grad_x_input(model, ids, answer)[0],
        "ig": ts.integrated_gradients(model, ids, answer, {s.steps}, {baseline_code(s)}).scores,
        "occlusion": ts.occlusion(model, ids, answer),
    }}
    names = list(methods)
    agreement = np.array([[ts.spearman(methods[a], methods[b]) for b in names] for a in names])
    print("Spearman's rank correlation")
    print(table(agreement, names, names))
    print(table(np.column_stack([methods[{s.x!r}], methods[{s.y!r}]]), pieces, [{s.x!r}, {s.y!r}]))
    """
    )
    if s.over_set:
        body += f"""
    over = ts.agreement_over(model, steps={s.steps})  # every method on each built-in prompt: minutes
    print(f"Spearman's rank correlation, the mean over {{len(over.prompts)}} built-in prompts")
    print(table(over.mean, names, names))
    """
    return Script(body, heatmap("agreement", "names", "names", "Spearman's rank correlation"))
