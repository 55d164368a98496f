"""Steps 3 and 4: what a head writes, read through the frozen final norm and the unembedding, and
every part's direct share of logit(target) − logit(foil) at the last position.

    w = what_it_writes(rec, layer, head, i, j)    # w.up, w.down: [(token id, logit change)]
    d = direct_shares(rec, target_id, foil_id)    # d.values.sum() ≈ d.logit_difference

A head's output goes through the norm after attention where the model has one (Gemma 2 and 3,
frozen at the attention output it saw) and the final norm frozen at its input at that position, so
a part's direct effect is linear and the shares add up exactly; the final norm's β (GPT-2) and an
unembedding bias are parts of their own. Gemma 2 soft-caps its final logits, cap·tanh(logit/cap),
which is not linear: there the shares add up to the difference before the cap, and ``note`` says
so with the capped difference.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from core.interp.head.parts import after_attention, check_close, check_split, frozen_norm, stream_parts
from core.interp.head.record import Recorded
from core.interp.head.step import check_cell

TOP_TOKENS = 10


@dataclass(frozen=True)
class Writes:
    """The head's output at the query, as logit changes through the frozen final norm."""

    up: list[tuple[int, float]]  # the tokens it pushes up most: (token id, logit change)
    down: list[tuple[int, float]]  # pushed down most
    key: int  # the chosen key position
    key_token: int  # the token there
    paths: np.ndarray  # (T,) each key's value path (w_i· · v through the output slice) on that token's logit
    whole: float  # the head's whole output on that token's logit: paths.sum()
    rank: int  # that token's rank among the head's pushes, 1 = pushed up most

    @property
    def copy(self) -> float:
        """How much the head copies the key's own token: the key's value path on its logit."""
        return float(self.paths[self.key])


def _unembed(adapter: Any, ids: list[int]) -> Any:
    """(len(ids), hidden) float64: the unembedding rows of ``ids``."""
    return adapter.unembed.weight[ids].detach().double()


def what_it_writes(rec: Recorded, layer: int, head: int, i: int, j: int, top: int = TOP_TOKENS) -> Writes:
    """What head ``head`` of ``layer`` writes at query ``i``, and how much of key ``j``'s token it copies."""
    check_cell(rec, layer, head, i, j)
    adapter = check_split(rec)
    d = adapter.shape.head_dim
    norm = frozen_norm(adapter.final_norm, rec.streams[-1, i])
    out_slice = adapter.out_weight(layer)[:, head * d : (head + 1) * d].detach().double()  # (hidden, d)
    after = after_attention(adapter, rec, layer, i)
    values = rec.weights[layer][head, i, :, None].double() * rec.v[layer][rec.kv_head(head)].double()
    written = norm(after(rec.z[layer][i, head].double() @ out_slice.T))  # (hidden,) its output, normed
    logits = (adapter.unembed.weight.detach().float() @ written.float()).double().numpy()  # (vocab,)
    order = np.argsort(-logits)
    token = rec.ids[j]
    row = _unembed(adapter, [token])[0]
    paths = (norm(after(values @ out_slice.T)) @ row).numpy()
    rank = int(np.flatnonzero(order == token)[0]) + 1
    return Writes(
        up=[(int(t), float(logits[t])) for t in order[:top]],
        down=[(int(t), float(logits[t])) for t in order[::-1][:top]],
        key=j,
        key_token=token,
        paths=paths,
        whole=float(written @ row),
        rank=rank,
    )


@dataclass(frozen=True)
class DirectShares:
    """Each part's direct effect on logit(target) − logit(foil) at the last position."""

    names: tuple[str, ...]  # "embeddings", "L1 H1"…, "L1 MLP"…, biases
    values: np.ndarray  # (P,) they sum to logit_difference
    logit_difference: float  # the model's own, from its final norm and unembedding (before any cap)
    heads: np.ndarray  # (layers, heads) the heads' shares as a grid
    mlps: np.ndarray  # (layers,)
    note: str = ""  # where the model's logits are capped after this difference (Gemma 2)


@dataclass(frozen=True)
class DirectLogits:
    """Parts of a final stream through the final norm, its scale frozen at that stream, and the
    unembedding rows of some tokens; with the biases, they add up to the tokens' logits."""

    values: Any  # (P, K) torch float64: each part's direct effect on each token's logit
    biases: dict  # {"final norm bias" | "unembedding bias": (K,) torch float64}, the ones the model has
    logits: Any  # (K,) torch float64: the model's own logits of the tokens, before any cap
    cap: str  # "This model caps its logits, c·tanh(logit/c)" where it does, else ""


def direct_logits(adapter: Any, parts: Any, stream: Any, tokens: list[int]) -> DirectLogits:
    """``parts`` (P, hidden) of the final ``stream`` (hidden,) read straight through to the logits
    of ``tokens``; ValueError when they do not add up."""
    import torch

    norm = frozen_norm(adapter.final_norm, stream)
    rows = _unembed(adapter, tokens)  # (K, hidden)
    values = norm(torch.as_tensor(parts).double()) @ rows.T
    biases = {}
    if norm.bias is not None:
        biases["final norm bias"] = norm.bias @ rows.T
    if getattr(adapter.unembed, "bias", None) is not None:
        biases["unembedding bias"] = adapter.unembed.bias.detach().double()[tokens]
    with torch.inference_mode():
        logits = adapter.unembed(adapter.final_norm(torch.as_tensor(stream).float()[None]))[
            0, tokens
        ].double()
    check_close(values.sum(0) + sum(biases.values()), logits, "logits")
    cap = adapter.softcap
    return DirectLogits(
        values, biases, logits, f"This model caps its logits, {cap:g}·tanh(logit/{cap:g})" if cap else ""
    )


def direct_shares(rec: Recorded, target: int, foil: int) -> DirectShares:
    """Every head's, MLP's, the embeddings' and the biases' direct share of the logit difference;
    with Gemma 2's final soft cap, of the difference before the cap (``note`` gives the capped one)."""
    import torch

    adapter = check_split(rec)
    last, layers = len(rec.ids) - 1, rec.layers
    parts = stream_parts(adapter, rec, layers, last)
    direct = direct_logits(adapter, parts.vectors, rec.streams[-1, last], [target, foil])
    values = direct.values[:, 0] - direct.values[:, 1]
    names = list(parts.names)
    embeddings = [n for n, name in enumerate(names) if name.endswith("embedding")]
    kept = [n for n in range(len(names)) if n not in embeddings]
    values = torch.cat([values[embeddings].sum()[None], values[kept]])
    names = ["embeddings", *(names[n] for n in kept)]
    for name, bias in direct.biases.items():
        names.append(name)
        values = torch.cat([values, (bias[0] - bias[1])[None]])
    logits = direct.logits
    difference, note = float(logits[0] - logits[1]), ""
    if direct.cap:
        capped = adapter.capped(logits)
        note = (
            f"{direct.cap}: the shares add up to the difference before the cap, {difference:.4f}; "
            f"after it, {float(capped[0] - capped[1]):.4f}."
        )
    values = values.numpy()
    check_close(values.sum(), difference, "logit difference")
    grid = np.array(
        [values[names.index(f"L{layer + 1} H{h + 1}")] for layer in range(layers) for h in range(rec.heads)]
    )
    mlps = np.array([values[names.index(f"L{layer + 1} MLP")] for layer in range(layers)])
    return DirectShares(tuple(names), values, difference, grid.reshape(layers, rec.heads), mlps, note)
