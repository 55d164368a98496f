"""The Scale panel's steps as scripts over core (see app/panels/scripts.py)."""

from __future__ import annotations

from app.panels.scale.state import (
    ARTICLE_TEMPERATURES,
    GUIDE_WIDTHS,
    HEAD_TOKENS,
    HEAD_WIDTHS,
    MULTIPLIER_GRID,
    TEMPERATURE_GRID,
    GrowthView,
    HeadsState,
    SaturationState,
    TemperatureState,
)
from app.panels.scripts import Script, bars, heatmap, lines, subplots
from core.maths import scaling

IMPORTS = """
    import numpy as np

    from core.maths import scaling
    from core.printing import table
    """


def grid(values, kind: str) -> str:
    """Code for the evenly (``linspace``) or geometrically (``geomspace``) spaced ``values``."""
    return f"np.{kind}({float(values[0])!r}, {float(values[-1])!r}, {len(values)})"


def saturation(s: SaturationState) -> Script:
    body = (
        IMPORTS
        + f"""
    # The settings: the scores as typed and the multiplier m.
    scores = scaling.parse_scores({s.scores!r})  # (n,)
    m = {s.multiplier!r}
    now = scaling.saturate(scores, m)  # softmax(scores × m) and its slopes
    weights, slopes = now.weights, now.jacobian.diagonal()  # slope of weight i: pᵢ(1 − pᵢ)
    labels = [f"{{z:g}}" for z in scores]
    print(f"Softmax of the scores × {{m:g}}, per score:")
    print(table(np.column_stack([now.logits, weights, slopes]), labels, ["scores × m", "weight", "slope"]))
    print(f"The winner's slope p(1 − p) = {{now.winner_gradient:.6g}} (at most 0.25)")

    # The winner's slope as the multiplier grows: the curve.
    multipliers = {grid(MULTIPLIER_GRID, "linspace")}
    sweep = scaling.saturation_sweep(scores, multipliers)
    print(table(sweep, [f"m = {{x:.4g}}" for x in multipliers], ["winner's slope"]))
    """
    )
    picture = subplots(
        bars("weights", "labels", "Weights softmax(scores × m)"),
        bars("slopes", "labels", "Slope of each weight pᵢ(1 − pᵢ)"),
        lines('{"winner\'s slope": (multipliers, sweep)}', "The winner's slope as m grows"),
        columns=3,
    )
    return Script(body, picture)


def growth(view: GrowthView, samples: int) -> Script:
    body = (
        IMPORTS
        + f"""
    # The settings: the dₖ marked, whether the spread is divided by √dₖ, the samples per width.
    d_k, divide, samples = {view.d_k}, {view.divide}, {scaling.capped_samples(samples)[0]}
    # Random q and k with unit-variance entries at every width, drawn from seed 0 as the panel does.
    growth = scaling.dot_product_spread(scaling.GROWTH_WIDTHS, samples, np.random.default_rng(0))
    spread = growth.spread_scaled if divide else growth.spread  # the points
    widths = [str(w) for w in growth.widths]
    measured = np.column_stack([growth.spread, np.sqrt(growth.widths), growth.spread_scaled])
    print(table(measured, widths, ["spread of q·k", "√dₖ", "spread ÷ √dₖ"]))
    at, at_scaled = growth.at(d_k)
    print(f"dₖ = {{d_k}}: spread of q·k {{at:.6g}}; divided by √dₖ it is {{at_scaled:.6g}}")

    # The guide line: √dₖ, or 1 once divided, at {len(GUIDE_WIDTHS)} widths.
    guide_x = {grid(GUIDE_WIDTHS, "geomspace")}
    guide = np.ones_like(guide_x) if divide else np.sqrt(guide_x)
    print(table(guide, [f"dₖ = {{x:.4g}}" for x in guide_x], ["guide"]))
    """
    )
    picture = """
    plt.plot(guide_x, guide, color="gray", label="1" if divide else "√dₖ")
    plt.plot(growth.widths, spread, "o", label="measured")
    plt.xscale("log")
    plt.legend()
    plt.title("Spread of q·k ÷ √dₖ" if divide else "Spread of q·k")
    """
    return Script(body, picture)


def temperature(s: TemperatureState) -> Script:
    body = (
        IMPORTS
        + f"""
    # The settings: the tokens, their width dₖ, the seed and the temperature T.
    n_tokens, d_k, seed, T = {s.n_tokens}, {s.d_k}, {s.seed}, {s.temperature!r}
    Q, K, V = scaling.random_qkv(n_tokens, d_k, seed)  # standard normal, (n_tokens, d_k) each
    reading = scaling.read_temperature(Q, K, V, T)  # softmax(Q·Kᵀ / (√dₖ·T)), each row's peak and entropy
    labels = [str(i) for i in range(n_tokens)]
    print(f"Weights at T = {{T:.6g}}: row = query, column = key")
    print(table(reading.weights, labels, labels))
    per_token = np.column_stack([reading.peak_index, reading.peak_weight, reading.entropy])
    print(table(per_token, labels, ["peak key", "max weight", "entropy (nats)"]))
    print(f"Mean entropy {{reading.mean_entropy:.6g}} nats (uniform: ln n = {{reading.max_entropy:.6g}})")
    print(f"Mean max weight {{reading.mean_peak:.6g}} (uniform: 1/n = {{1 / n_tokens:.6g}})")

    # Mean entropy as the temperature changes: the curve, then the article's five temperatures.
    temperatures = {grid(TEMPERATURE_GRID, "geomspace")}
    curve = scaling.temperature_sweep(Q, K, V, temperatures)
    print(table(curve.mean_entropy, [f"T = {{t:.4g}}" for t in temperatures], ["mean entropy"]))
    article = scaling.temperature_sweep(Q, K, V, {list(ARTICLE_TEMPERATURES)})
    rows = [f"T = {{t:g}}" for t in article.temperatures]
    means = np.column_stack([article.mean_entropy, article.mean_peak])
    print(table(means, rows, ["mean entropy", "mean max weight"]))
    """
    )
    picture = subplots(
        heatmap("reading.weights", "labels", "labels", "Weights at temperature T"),
        lines('{"mean entropy": (temperatures, curve.mean_entropy)}', "Mean entropy vs T", log="x"),
    )
    return Script(body, picture)


def heads(s: HeadsState) -> Script:
    body = (
        IMPORTS
        + f"""
    # The settings: the head width dₖ and the seed of the {HEAD_TOKENS} tokens and of W_Q, W_K.
    d_k, seed = {s.d_k}, {s.seed}
    proj = scaling.random_projection({HEAD_TOKENS}, seed)  # X (n, d_model), W_Q, W_K (d_model, d_model)
    c = scaling.compare_scaling(proj, d_k)  # Q, K: the first dₖ columns; with and without ÷ √dₖ
    labels = [str(i) for i in range({HEAD_TOKENS})]
    print("Weights with ÷ √dₖ")
    print(table(c.scaled.weights, labels, labels))
    print("Weights without scaling")
    print(table(c.unscaled.weights, labels, labels))
    print(f"{{c.heads}} head(s) of width {{d_k}} fill d_model {{scaling.D_MODEL}}.")
    print(f"Mean entropy {{c.entropy_scaled:.6g}} nats with ÷ √dₖ, {{c.entropy_unscaled:.6g}} without")

    # Mean entropy at every head width that divides d_model: the two curves.
    sweep = scaling.reprojection_sweep(proj, {HEAD_WIDTHS.tolist()})
    columns = ["with ÷ √dₖ", "without"]
    print(table(np.column_stack([sweep.entropy_scaled, sweep.entropy_unscaled]), sweep.widths, columns))
    print(f"Uniform weights: ln {HEAD_TOKENS} = {{sweep.max_entropy:.6g}} nats")
    """
    )
    picture = subplots(
        heatmap("c.scaled.weights", "labels", "labels", "With ÷ √dₖ"),
        heatmap("c.unscaled.weights", "labels", "labels", "Without scaling"),
        lines(
            '{"with ÷ √dₖ": (sweep.widths, sweep.entropy_scaled), '
            '"without": (sweep.widths, sweep.entropy_unscaled)}',
            "Mean entropy vs head width",
            log="x",
        ),
        columns=3,
    )
    return Script(body, picture)
