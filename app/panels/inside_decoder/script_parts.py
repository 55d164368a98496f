"""Code fragments the Inside a decoder scripts share: the knocked-out heads,
the answer tokens, the top next tokens."""

from __future__ import annotations

from app.panels.inside_decoder.state import TOP


def top_code() -> str:
    """Code that defines ``top(title, probs)``: print the most probable next tokens and the rest,
    and return their (labels, probabilities) for a picture."""
    return f"""
    def top(title, probs):
        best = np.argsort(-probs)[:{TOP}]  # the {TOP} most probable next tokens
        labels = [token_text.visible(p) for p in token_text.pieces(model, best)] + ["(rest)"]
        shares = [*probs[best], 1 - probs[best].sum()]
        print(title)
        print(table(shares, labels, ["p"]))
        return labels, shares
    """


def knocked_code(heads, mode: str, first: bool) -> str:
    """Code that names the knocked-out ``heads`` and the ablation as ``knocked``, ``mode``,
    ``means`` and ``first``."""
    where = "knocked out at the first token too" if first else "the first token left alone"
    means = (
        "analysis_of(model).means()  # each head's mean output over a reference text"
        if mode == "mean"
        else "None  # zero-ablation replaces a head's output with 0"
    )
    return f"""
    knocked = {list(heads)!r}  # knocked-out heads, (layer, head) counted from 0
    mode, first = {mode!r}, {first!r}  # {mode}-ablation, {where}
    means = {means}
    """


def ablation_imports(mode: str) -> tuple[str, ...]:
    """What a script imports for ``mode``-ablation: mean-ablation reads the means."""
    return ("from core.interp.analysis import analysis_of",) if mode == "mean" else ()


def answers_code(target: str, foil: str, prompt: str = "prompt") -> str:
    """Code that reads the target and the foil as tokens ``target`` and ``foil``."""
    return f"""
    # The answer tokens: a word continuing the prompt starts with a space; a word of several
    # tokens is refused (ValueError names its pieces).
    target = answer_token(model.tokenizer, {target!r}, {prompt})
    foil = answer_token(model.tokenizer, {foil!r}, {prompt})
    """
