"""The Linear attention panel's steps as scripts over core (see app/panels/scripts.py)."""

from __future__ import annotations

from app.panels.linear.state import (
    CACHE_LENGTHS,
    COUNT_LENGTHS,
    FEATURE_COUNTS,
    BracketState,
    FeatureState,
    RecallState,
    RunningState,
)
from app.panels.scripts import Script, heatmap, lines
from core.lab.settings import RecallSettings


def lengths_code(name: str, lengths) -> str:
    """Code that makes the list ``name`` of the plots' lengths: 41 from 1 to 2²⁰, log-spaced."""
    return (
        f"{name} = np.unique(np.round(np.geomspace({lengths[0]}, {lengths[-1]}, 41)).astype(int)).tolist()"
        f"  # {len(lengths)} lengths"
    )


def bracket(s: BracketState) -> Script:
    body = f"""
    import numpy as np

    from core.maths.attention import attend
    from core.maths.linear import bracket, elu_plus_one, feature_weights, op_counts
    from core.maths.qkv import random_example
    from core.printing import table

    tokens = {s.text.split()!r}
    Q, K, V = random_example(tokens, {s.d_model}, {s.d_k}, {s.seed}).projections()  # (n, d_k) each
    soft = attend(Q, K, V)
    Qf, Kf = elu_plus_one(Q), elu_plus_one(K)  # φ = elu + 1: every feature positive
    weights = feature_weights(Qf, Kf)  # (n, n) the matrix the brackets avoid
    b = bracket(Qf, Kf, V)  # S = φ(K)ᵀ·V (d, d), z = Σ φ(k), then φ(Q)·S / φ(Q)·z
    dims = [f"v{{j + 1}}" for j in range(V.shape[1])]
    print("softmax weights:")
    print(table(soft.weights, tokens, tokens))
    print("linear weights φ(q)·φ(k) / φ(q)·z:")
    print(table(weights, tokens, tokens))
    print("state S and z:")
    features = [f"φ{{i + 1}}" for i in range(len(b.sum_keys))]
    print(table(np.column_stack([b.state, b.sum_keys]), features, dims + ["z"]))
    print("rows: softmax | linear via n × n | linear via d × d:")
    print(table(np.column_stack([soft.output, weights @ V, b.output]), tokens, dims * 3))
    print("normalisers φ(q)·z:", b.normaliser)
    print("largest difference of the two linear forms:", np.abs(weights @ V - b.output).max())
    {lengths_code("lengths", COUNT_LENGTHS)}
    counts = [op_counts(n, {s.d_k}) for n in lengths]
    print(table([[c.softmax, c.linear] for c in counts], lengths, ["softmax", "linear"]))
    print("linear needs fewer multiply-adds from n =", counts[0].crossover)
    """
    return Script(body, heatmap("b.state", "dims", "dims", "S = φ(K)ᵀ·V"))


def features(s: FeatureState) -> Script:
    body = f"""
    import numpy as np

    from core.maths.attention import attend
    from core.maths.linear import (
        favor_weights, feature_error, feature_weights, features, kernel_inputs, random_directions
    )
    from core.maths.qkv import random_example

    tokens = {s.text.split()!r}
    Q, K, _ = random_example(tokens, 8, {s.d_k}, {s.seed}).projections()
    temperature, m, row = {s.temperature!r}, {s.features}, {s.row}
    row = min(row, len(tokens) - 1)
    exact = attend(Q, K, K, temperature=temperature).weights
    q, k = kernel_inputs(Q, K, temperature)  # exp(q'·k') = exp(q·k / (√d·T))
    omega = random_directions(m, {s.d_k}, {s.feature_seed})
    maps = {{
        "softmax": exact,
        "elu + 1": feature_weights(features("elu", q), features("elu", k)),
        "ReLU": feature_weights(features("relu", q), features("relu", k)),
        "random features": favor_weights(q, k, omega),  # the features' ratio, computed in logs
    }}
    for name, weights in maps.items():
        print(f"{{name:>16}}:", " ".join(f"{{w:.6g}}" for w in weights[row]),
              f"  mean |error| {{np.abs(weights - exact).mean():.6g}}")
    counts = {list(FEATURE_COUNTS)!r}
    curve = [feature_error(Q, K, n, {s.feature_seed}, temperature) for n in counts]
    for n, error in zip(counts, curve):
        print(f"m = {{n:5}}: mean |error| {{error:.6g}} (over 20 draws)")
    """
    picture = lines('{"random features": (counts, curve)}', "Mean |error|", "features m", "error", "xy")
    return Script(body, picture)


def running(s: RunningState) -> Script:
    body = f"""
    import numpy as np

    from core.maths.cache_size import CACHES, cache_bytes
    from core.maths.linear import chunked, parallel, recurrent, seeded_inputs, state_at
    from core.printing import table

    length, d, chunk, t = {s.length}, {s.d}, {s.chunk}, {min(s.token, s.length - 1)}
    Qf, Kf, V = seeded_inputs(length, d, {s.seed})  # elu + 1 features of normal Q and K; normal V
    S, z = state_at(Kf, V, t)  # S_t = Σ φ(k)·vᵀ and z_t = Σ φ(k) over tokens 0 … t
    dims = [f"v{{j + 1}}" for j in range(d)]
    print(table(np.column_stack([S, z]), [f"φ{{i + 1}}" for i in range(d)], dims + ["z"]))
    exact = parallel(Qf, Kf, V, causal=True)
    print(table([Qf[t] @ S / (Qf[t] @ z), exact[t]], ["state", "parallel"], dims))
    print("largest difference, token by token:", np.abs(recurrent(Qf, Kf, V) - exact).max())
    print("largest difference, in chunks:", np.abs(chunked(Qf, Kf, V, chunk) - exact).max())
    {lengths_code("lengths", CACHE_LENGTHS)}
    print("bytes each model keeps after n tokens (bf16):")
    print(table([[cache_bytes(c, n) for c in CACHES] for n in lengths], lengths, [c.model for c in CACHES]))
    """
    return Script(body)


def recall(s: RecallState) -> Script:
    body = f"""
    from core.maths.recall import MEMORIES, default_pairs, recall_sweep
    from core.printing import table

    dim, beta, decay, seed = {s.dim}, {s.beta!r}, {s.decay!r}, {s.seed}
    # For each N: store N random unit key → value pairs, ask for every key, count the keys whose
    # own value is the nearest stored value to the answer (at least 512 keys per N).
    sweep = recall_sweep(dim, default_pairs(dim), beta, decay, seed)
    rates = [[sweep.rates[m][i] for m in MEMORIES] for i in range(len(sweep.pairs))]
    print(table(rates, sweep.pairs, list(MEMORIES)))
    print("largest N with 90 % recalled:", {{m: sweep.knee(m) for m in MEMORIES}})
    """
    picture = lines(
        "{m: (sweep.pairs, sweep.rates[m]) for m in MEMORIES}",
        "Keys recalled",
        "stored pairs N",
        "recalled",
        "x",
    )
    return Script(body, picture)


def trained(s: RecallSettings, step: int, finals: dict[int, dict[str, float]]) -> Script:
    """The run on screen to its last checkpoint (``step``), and the finals of earlier runs."""
    body = f"""
    from dataclasses import replace

    from core.lab.recall_task import RecallRun
    from core.lab.settings import RecallSettings

    # Three models, alike but for how a token reads earlier ones, trained in turn on the same batches.
    settings = replace({s!r}, steps={step})
    run = RecallRun(settings)
    for c in run.train():
        print(f"step {{c.step:5}}:", "  ".join(f"{{m}} {{a:.6g}}" for m, a in c.accuracy.items()))
    print("a guess among the", settings.pairs, "values:", 1 / settings.pairs)
    finals = {finals!r}  # earlier runs' last accuracy, by number of pairs
    for pairs, accuracy in sorted(finals.items()):
        print(f"{{pairs}} pairs:", "  ".join(f"{{m}} {{a:.6g}}" for m, a in accuracy.items()))
    """
    return Script(body)
