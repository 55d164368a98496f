"""Every head of a model characterised at once: where it looks on two probes, and what it copies.

    atlas = head_atlas(model)                    # model: a LoadedModel, decoder or encoder
    atlas.scores["induction"]                    # (layers, heads), one map per name in SCORES
    atlas.text_ids, atlas.repeat_ids             # the two probes as run
    cloud = qk_cloud(atlas, layer=4, heads=[1])  # the head's queries and keys projected to 2-D
    ov = ov_reading(model, 4, 1, source=token)   # what the head writes when it reads a token

The probes: (a) a natural text, (b) the beginning-of-text token, then ``n`` random tokens (ids
LOW … vocabulary − 1, distinct, from ``numpy.random.default_rng(seed)``), then the same ``n``
again. With A a head's weights (rows: queries), the scores are the means of

- previous_token: A[t, t − 1] over t ≥ 1 of (a);   first_token: A[t, 0] over t ≥ 1 of (a);
- self: A[t, t] over every t of (a);
- duplicate_token: A[t, t − n] over the second copy of (b);  induction: A[t, t − n + 1] there;
- copying (Elhage et al. 2021): Σλ / Σ|λ| over the eigenvalues of the head's OV circuit
  W_U W_O,h W_V,h W_E, from the small matrix W_V,h W_E W_U W_O,h (the same non-zero eigenvalues),
  with the embedding and the unembedding as stored: no norm, no embedding scale. It depends on the
  weights alone, so it is computed once per loaded model and kept.

An encoder (MiniLM) gets the first three: it reads both ways and has no unembedding, so the
duplicate-token, induction and copying scores do not apply (``HeadAtlas.missing`` says why).
Layers and heads are 0-based.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from core.decoder.adapter import adapter_of
from core.decoder.run import hooked_run
from core.interp.analysis import analysis_of
from core.interp.head import direct_shares, record
from core.interp.prediction import cut_note, encode
from core.interp.ranking import answer_pair
from core.models.kinds import DECODER

__all__ = [
    "LENGTH", "LOW", "NATURAL", "NOT_FOR_ENCODERS", "SCORES", "HeadAtlas", "OVReading", "QKCloud",
    "head_atlas", "ov_reading", "qk_cloud",
]  # fmt: skip

SCORES = ("previous_token", "first_token", "self", "duplicate_token", "induction", "copying")
LENGTH = 40  # random tokens in each copy of probe (b)
LOW = 1000  # the smallest id probe (b) draws: above the special and the byte tokens
NOT_FOR_ENCODERS = {  # score → why it does not apply to a model that reads both ways
    "duplicate_token": "an encoder reads both ways: the earlier copy is no more its past than the later",
    "induction": "an encoder predicts no next token, and it sees the later copy as well as the earlier one",
    "copying": "an encoder has no unembedding: it outputs vectors, not tokens",
}
TOP = 8  # tokens named per reading
DIRECTIONS = 4  # singular directions of W_O W_V read out
ROUND_TRIP_ROWS = 1024  # vocabulary rows a step of W_E W_U widens to float64 (cache-sized pieces)
NATURAL = (
    "The old lighthouse keeper climbed the stairs every evening at dusk. He carried a lamp, a flask "
    "of tea and a notebook for the ships he saw. Some nights the sea was calm; on others the wind "
    "howled and the waves broke on the rocks. In the morning he walked to the village and told the "
    "children about the ships."
)


@dataclass(frozen=True)
class HeadAtlas:
    """The scores of every head, and the two runs they come from."""

    text_ids: tuple[int, ...]  # (T,) probe (a)
    repeat_ids: tuple[int, ...]  # (1 + 2n,) probe (b), the first token included
    n: int
    scores: dict[str, np.ndarray]  # name in SCORES → (layers, heads) float64, those that apply
    missing: dict[str, str]  # name in SCORES → why it does not apply to this model (an encoder)
    text_weights: np.ndarray  # (layers, heads, T, T) float32
    repeat_weights: np.ndarray  # (layers, heads, 1 + 2n, 1 + 2n) float32
    queries: tuple[Any, Any]  # per probe, (layers, heads, T, head_dim) torch: after rotary
    keys: tuple[Any, Any]  # per probe, (layers, kv_heads, T, head_dim) torch
    cut: str  # what a text longer than a decoder reads lost (core.interp.prediction.cut_note), or ""


def repeat_probe(model: Any, n: int, seed: int, low: int | None = None) -> tuple[int, ...]:
    """Probe (b): the model's first token, ``n`` distinct seeded random ids from ``low`` (None:
    LOW) up, then the same again."""
    low = LOW if low is None else low
    vocab = model.module.get_input_embeddings().num_embeddings
    if n < 2:
        raise ValueError(f"The repeated probe needs at least 2 random tokens; got {n}.")
    if 1 + 2 * n > model.max_tokens:
        most = (model.max_tokens - 1) // 2
        raise ValueError(f"{n} tokens twice is longer than {model.name} reads: at most {most}.")
    if vocab - low < n:
        raise ValueError(
            f"{model.name} has {vocab} tokens: too few to draw {n} distinct ids from {low} up; "
            "draw from a smaller first id, or fewer tokens."
        )
    tokenizer = model.tokenizer
    starts = (tokenizer.bos_token_id, tokenizer.cls_token_id, tokenizer.eos_token_id)  # [CLS] for BERT
    first = next((i for i in starts if i is not None), 0)
    drawn = np.random.default_rng(seed).choice(np.arange(low, vocab), size=n, replace=False)
    return (int(first), *map(int, drawn), *map(int, drawn))


def attention_scores(text: np.ndarray, repeat: np.ndarray, n: int) -> dict[str, np.ndarray]:
    """The scores read from the weights: ``text`` (layers, heads, T, T) of probe (a), ``repeat``
    (layers, heads, 1 + 2n, 1 + 2n) of probe (b)."""
    t = np.arange(1, text.shape[-1])
    second = np.arange(n + 1, 2 * n + 1)  # the second copy's positions
    mean = lambda a, rows, cols: a[..., rows, cols].astype(np.float64).mean(-1)  # noqa: E731
    return {
        "previous_token": mean(text, t, t - 1),
        "first_token": mean(text, t, 0 * t),
        "self": mean(text, np.arange(text.shape[-1]), np.arange(text.shape[-1])),
        "duplicate_token": mean(repeat, second, second - n),
        "induction": mean(repeat, second, second - n + 1),
    }


def _ov(adapter: Any, layer: int, head: int) -> tuple[Any, Any]:
    """Head ``head``'s W_V (head_dim, hidden) and W_O (hidden, head_dim), float64."""
    shape = adapter.shape
    value = adapter.qkv_weight(layer, "v", head // (shape.heads // shape.kv_heads))[0].double()
    out = adapter.out_weight(layer)[:, head * shape.head_dim : (head + 1) * shape.head_dim].double()
    return value, out


def _tables(model: Any) -> tuple[Any, Any, bool]:
    """The embedding and the unembedding as stored, (vocab, hidden) each, and whether they are
    one table (tied): reading a vocabulary table is what costs, so a tied one is read once."""
    embed = model.module.get_input_embeddings().weight
    unembed = adapter_of(model.module).unembed.weight[: embed.shape[0]]
    return embed, unembed, unembed.data_ptr() == embed.data_ptr() and unembed.shape == embed.shape


def round_trip(model: Any) -> Any:
    """(hidden, hidden) float64 torch: W_E · W_U with W_E as (hidden, vocab), summed over the
    vocabulary in pieces. Float32 products are exact in float64, so this is the float64 product."""
    import torch

    embed, unembed, tied = _tables(model)
    total = torch.zeros(embed.shape[1], unembed.shape[1], dtype=torch.float64)
    with torch.inference_mode():
        for start in range(0, embed.shape[0], ROUND_TRIP_ROWS):
            part = embed[start : start + ROUND_TRIP_ROWS].double()
            total.addmm_(part.T, part if tied else unembed[start : start + ROUND_TRIP_ROWS].double())
    return total


def copying_scores(model: Any) -> np.ndarray:
    """(layers, heads): Σλ / Σ|λ| over the eigenvalues of each head's OV circuit, from the
    (head_dim, head_dim) W_V,h · (W_E W_U) · W_O,h; heads sharing a value head share its first product."""
    import torch

    adapter = adapter_of(model.module)
    s = adapter.shape
    scores = np.zeros((s.layers, s.heads))
    with torch.inference_mode():
        trip = round_trip(model)
        for layer in range(s.layers):
            values = torch.cat([adapter.qkv_weight(layer, "v", k)[0] for k in range(s.kv_heads)])
            read = (values.double() @ trip).view(s.kv_heads, s.head_dim, -1)  # (kv_heads, d, hidden)
            outs = adapter.out_weight(layer).double().reshape(-1, s.heads, s.head_dim).transpose(0, 1)
            eigen = torch.linalg.eigvals(read.repeat_interleave(s.heads // s.kv_heads, 0) @ outs)
            scores[layer] = (eigen.sum(-1).real / eigen.abs().sum(-1)).numpy()
    scores.setflags(write=False)  # kept per model and shared by every atlas of it
    return scores


@dataclass(frozen=True)
class OVReading:
    """What one head writes when it reads a token (its OV circuit, embedding and unembedding as
    stored), and the strongest directions of W_O W_V read out as tokens."""

    source: int
    out_tokens: tuple[int, ...]  # (TOP,) the tokens whose logits its output raises most
    out_logits: np.ndarray  # (TOP,)
    source_rank: int  # where the source itself ranks among them (1: it copies itself first)
    singular: np.ndarray  # (DIRECTIONS,) the largest singular values of W_O W_V
    reads: tuple[tuple[int, ...], ...]  # per direction, the tokens whose embeddings it reads most
    writes: tuple[tuple[int, ...], ...]  # per direction, the tokens whose logits it writes most


def ov_reading(model: Any, layer: int, head: int, source: int) -> OVReading:
    """Head ``head`` of ``layer`` (0-based) attending to token ``source``: W_U W_O W_V e(source)."""
    import torch

    adapter = adapter_of(model.module)
    shape = adapter.shape
    if not (0 <= layer < shape.layers and 0 <= head < shape.heads):
        raise ValueError(
            f"Layer {layer + 1}, head {head + 1} does not exist: {shape.layers} × {shape.heads}."
        )
    with torch.inference_mode():
        embed, unembed, tied = _tables(model)
        value, out = _ov(adapter, layer, head)
        written = out @ (value @ embed[source].double())  # (hidden,)
        # W_O W_V = q_o r_o r_vᵀ q_vᵀ: its singular vectors from the small head_dim × head_dim core.
        (q_o, r_o), (q_v, r_v) = torch.linalg.qr(out), torch.linalg.qr(value.T)
        u, sizes, vh = torch.linalg.svd(r_o @ r_v.T)
        inputs, outputs = (q_v @ vh.T)[:, :DIRECTIONS], (q_o @ u)[:, :DIRECTIONS]  # (hidden, DIRECTIONS)
        unembedded = torch.cat([written[:, None], outputs], 1)  # (hidden, 1 + DIRECTIONS)
        if tied:
            both = embed @ torch.cat([inputs, unembedded], 1).to(embed.dtype)
            read, wrote = both[:, :DIRECTIONS], both[:, DIRECTIONS:]
        else:
            read, wrote = embed @ inputs.to(embed.dtype), unembed @ unembedded.to(unembed.dtype)
        logits = wrote[:, 0].double()  # (vocab,)
        top = logits.topk(TOP)
        reads = read.topk(TOP, dim=0).indices.T  # (DIRECTIONS, TOP)
        writes = wrote[:, 1:].topk(TOP, dim=0).indices.T
    return OVReading(
        source=source,
        out_tokens=tuple(top.indices.tolist()),
        out_logits=top.values.numpy(),
        source_rank=int((logits > logits[source]).sum()) + 1,
        singular=sizes[:DIRECTIONS].numpy(),
        reads=tuple(tuple(row) for row in reads.tolist()),
        writes=tuple(tuple(row) for row in writes.tolist()),
    )


def head_atlas(
    model: Any, text: str = NATURAL, n: int = LENGTH, seed: int = 0, low: int | None = None
) -> HeadAtlas:
    """Every head's scores on ``text`` and on ``n`` random tokens seeded by ``seed``, repeated."""
    import torch

    encoder, cut = model.kind != DECODER, ""
    if encoder:
        text_ids = tuple(model.tokenizer(text, truncation=True, max_length=model.max_tokens)["input_ids"])
    else:
        ids, dropped = encode(model, text)
        text_ids, cut = tuple(ids), cut_note(model, ids, dropped)
    if len(text_ids) < 2:
        raise ValueError("The text is one token: the scores need at least two; type a longer text.")
    repeat_ids = repeat_probe(model, n, seed, low)
    if encoder:  # its attention tapped (core.interp.head.record): weights, q and k per layer
        recorded = [record(model, ids) for ids in (text_ids, repeat_ids)]
        weights = [torch.stack(r.weights).numpy() for r in recorded]
        queries = tuple(torch.stack(r.q) for r in recorded)
        keys = tuple(torch.stack(r.k) for r in recorded)
    else:
        runs = [
            hooked_run(model, ids, cache=["pattern", "q", "k"], unembed=False)
            for ids in (text_ids, repeat_ids)
        ]
        weights = [run.stacked("pattern").float().numpy() for run in runs]
        queries = tuple(run.stacked("q").transpose(1, 2).float() for run in runs)  # (L, heads, T, d)
        keys = tuple(run.stacked("k").transpose(1, 2).float() for run in runs)
    missing = NOT_FOR_ENCODERS if encoder else {}
    scores = attention_scores(*weights, n)
    if not encoder:  # the weights alone decide it: computed once per model
        scores["copying"] = analysis_of(model).once("copying", (), lambda: copying_scores(model))
    return HeadAtlas(
        text_ids=text_ids,
        repeat_ids=repeat_ids,
        n=n,
        scores={name: scores[name] for name in SCORES if name not in missing},
        missing=dict(missing),
        text_weights=weights[0],
        repeat_weights=weights[1],
        queries=queries,
        keys=keys,
        cut=cut,
    )


@dataclass(frozen=True)
class QKCloud:
    """Queries and keys of one layer's heads in one 2-D picture (AttentionViz's joint view)."""

    points: np.ndarray  # (N, 2) the projection: queries first, then keys
    is_query: np.ndarray  # (N,) bool
    head: np.ndarray  # (N,) the query head of a query, the key/value head of a key
    probe: np.ndarray  # (N,) 0: the text, 1: the repeated tokens
    position: np.ndarray  # (N,) in its probe
    shift: np.ndarray  # (head_dim,) added to every key, so that keys and queries share a mean
    scale: float  # queries × scale, keys ÷ scale: equal mean sizes; q·k is unchanged


def qk_cloud(atlas: HeadAtlas, layer: int, heads: Sequence[int]) -> QKCloud:
    """The queries of ``heads`` (query heads that share one key/value head) and their keys, over
    both probes, projected together onto their two principal directions. Before that, the keys
    are shifted to the queries' mean (which adds the same amount to every score of a query, so
    the softmax is unchanged) and queries and keys are scaled to the same mean size."""
    shape_heads, kv_heads = atlas.queries[0].shape[1], atlas.keys[0].shape[1]
    if not 0 <= layer < atlas.queries[0].shape[0]:
        raise ValueError(
            f"Layer {layer + 1} does not exist: the model has layers 1 to {atlas.queries[0].shape[0]}."
        )
    if not heads or any(not 0 <= h < shape_heads for h in heads):
        raise ValueError(f"Choose heads from 1 to {shape_heads}.")
    group = {h // (shape_heads // kv_heads) for h in heads}
    if len(group) != 1:
        raise ValueError("Heads in one cloud must share their keys (one key/value head).")
    kv = group.pop()
    q = [atlas.queries[p][layer, list(heads)].numpy() for p in (0, 1)]  # (H, T, d) per probe
    k = [atlas.keys[p][layer, kv].numpy() for p in (0, 1)]  # (T, d) per probe
    queries = np.concatenate([x.reshape(-1, x.shape[-1]) for x in q]).astype(np.float64)
    keys = np.concatenate(k).astype(np.float64)
    shift = queries.mean(0) - keys.mean(0)
    keys = keys + shift
    scale = float(np.sqrt(np.linalg.norm(keys, axis=1).mean() / np.linalg.norm(queries, axis=1).mean()))
    joint = np.concatenate([queries * scale, keys / scale])
    centred = joint - joint.mean(0)
    _, _, vt = np.linalg.svd(centred, full_matrices=False)
    points = centred @ vt[:2].T
    lengths = [x.shape[1] for x in q]
    position = np.concatenate(
        [np.tile(np.arange(t), len(heads)) for t in lengths] + [np.arange(t) for t in lengths]
    )
    probe = np.concatenate(
        [np.full(t * len(heads), p) for p, t in enumerate(lengths)]
        + [np.full(t, p) for p, t in enumerate(lengths)]
    )
    head = np.concatenate([np.repeat(list(heads), t) for t in lengths] + [np.full(sum(lengths), kv)])
    return QKCloud(points, np.arange(len(joint)) < len(queries), head, probe, position, shift, scale)


def direct_map(model: Any, answer: str, target: str, foil: str) -> tuple[np.ndarray, tuple[str, ...]]:
    """(layers, heads): each head's direct share of logit(target) − logit(foil) at the end of
    ``answer`` (the final norm's scale frozen, ``core.interp.head.direct_shares``), and notices
    (Gemma 2's capped logits); ValueError when the target and the foil do not make an answer."""
    tokens = answer_pair(model.tokenizer, target, foil, answer)
    ids = tuple(encode(model, answer)[0])
    key = (ids, tokens[0].id, tokens[1].id)
    shares = analysis_of(model).once(
        "atlas direct", key, lambda: direct_shares(record(model, ids), tokens[0].id, tokens[1].id)
    )
    return shares.heads, (shares.note,) if shares.note else ()
