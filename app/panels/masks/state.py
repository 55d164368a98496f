"""The Masks panel's one state (shared by every step) and its computation, Qt-free.

r = compute_masks(MasksState())   # "the cat sat on the mat [PAD] [PAD]", causal + 2 padding
r.mask                            # (8, 8) bool
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np

from core import inputs
from core.maths import masks
from core.maths.attention import AttentionTrace, attend
from core.maths.qkv import MAX_TOKENS, Example, cross_attention, random_example, tokenize

D_MODEL, D_K = 8, 4
FILLS = (-np.inf, -1e9, -10.0)
FILL_NAMES = ("−∞", "−1e9", "−10")
Grid = tuple[tuple[bool, ...], ...]  # a custom mask, hashable


@dataclass(frozen=True)
class MasksState:
    text: str = "the cat sat on the mat [PAD] [PAD]"
    kind: str = "causal"  # one of core.maths.masks.KINDS
    window: int = 3
    symmetric: bool = False
    global_text: str = "0"  # global positions as typed, e.g. "0, 5"
    n_pad: int = 2
    custom: Grid | None = None  # the grid of the "custom" kind, resized to the text by compute
    seed: int = 0
    queries: str = "die Katze sitzt"
    keys: str = "the cat sits on the mat"
    copy_causal: bool = False


@dataclass(frozen=True)
class MasksResult:
    state: MasksState  # settled: a custom grid of the text's size
    example: Example
    mask: np.ndarray  # (n, n) bool
    trace: AttentionTrace
    cost: masks.MaskCost
    leak: np.ndarray  # (n,) weight on hidden keys per query
    empty: np.ndarray  # indices of rows that see nothing
    additive: tuple[masks.AdditiveOutcome, ...]  # one per FILLS
    copy: AttentionTrace  # the real (not padding) tokens, with or without a causal mask
    cross: AttentionTrace  # (len(queries), len(keys))
    cross_tokens: tuple[list[str], list[str]]

    @property
    def notice(self) -> tuple[str, str] | None:
        """A warning while some query may attend to nothing."""
        if not self.empty.size:
            return None
        names = ", ".join(f"“{self.example.tokens[i]}”" for i in self.empty)
        return (
            f"Query row(s) {names} may attend to nothing: every key is hidden. Their weights "
            "and outputs are zeros, not NaN (see the Additive masks step for why).",
            "warning",
        )


def as_grid(mask: np.ndarray) -> Grid:
    return tuple(tuple(bool(v) for v in row) for row in mask)


def unpadded(r: MasksResult) -> np.ndarray:
    """A copy of the current mask before padding: where a custom mask starts from."""
    s = r.state
    return build_spec(replace(s, n_pad=0), r.mask.shape[0]).copy()


def build_spec(s: MasksState, n: int) -> np.ndarray:
    custom = None if s.custom is None else masks.resized_grid(np.array(s.custom, dtype=bool), n)
    spec = masks.MaskSpec(
        s.kind,
        s.window,
        s.symmetric,
        inputs.positions(s.global_text, "Global positions", MAX_TOKENS - 1),
        s.n_pad,
        custom,
    )
    return masks.build(spec, n)


def compute_masks(s: MasksState) -> MasksResult:
    tokens = tokenize(s.text)
    n = len(tokens)
    if s.kind == "custom":
        s = replace(
            s, custom=as_grid(masks.resized_grid(None if s.custom is None else np.array(s.custom), n))
        )
    example = random_example(tokens, D_MODEL, D_K, s.seed)
    mask = build_spec(s, n)
    Q, K, V = example.projections()
    trace = attend(Q, K, V, mask=mask)
    additive = tuple(masks.additive_outcome(trace.scaled, mask, f) for f in FILLS)
    real = max(n - s.n_pad, 1)  # padding is not trained on: copy among real tokens only
    copy = attend(Q[:real], K[:real], V[:real], mask=masks.causal(real) if s.copy_causal else None)
    q_tokens, kv_tokens = tokenize(s.queries), tokenize(s.keys)
    cross = cross_attention(q_tokens, kv_tokens, D_MODEL, D_K, s.seed)
    return MasksResult(
        s,
        example,
        mask,
        trace,
        masks.cost(mask),
        masks.leaked_weight(trace.weights, mask),
        masks.empty_rows(mask),
        additive,
        copy,
        cross,
        (q_tokens, kv_tokens),
    )


def leak_text(v: float) -> str:
    """A leaked weight as a readable number; exact zeros say so."""
    if v == 0:
        return "0 (exact)"
    return f"{v:.3g}".replace("-", "−")


def key_labels(r: MasksResult) -> list[str]:
    """Key names, padding keys marked ·pad (unless they say PAD themselves)."""
    tokens, n_pad = r.example.tokens, r.state.n_pad
    n = len(tokens)
    return [f"{t}·pad" if k >= n - n_pad and "PAD" not in t else t for k, t in enumerate(tokens)]
