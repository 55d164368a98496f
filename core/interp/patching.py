"""Activation patching: which activations carry a decoder's answer.

Run a clean prompt and a corrupted one of the same length, copy one activation from one run
into the other, and measure how much of the answer comes back:

    pair = prepare(model, "When Mary and John …, John gave a drink to",
                   "When Mary and John …, Mary gave a drink to", " Mary", " John")
    grid = patch(model, pair, "resid")                # Grid: (layers + 1, T) values
    grid.values                                       # 0 = the corrupted run's metric, 1 = the clean's

The metric is logit(target) − logit(foil) at the last position. Denoising (the default) copies
from the clean run into the corrupted one; noising the other way; the values are normalised the
same way in both. What a grid patches (``WHATS``): ``resid`` the stream entering each block and
leaving the last (rows: embeddings, layer 1 … layer L), ``attn`` and ``mlp`` each layer's outputs
(layers × positions), ``heads`` each head's output at every position (layers × heads), ``q``,
``k``, ``v``, ``pattern`` each head's queries, keys, values or weights at every position (as
TransformerLens's ``get_act_patch_attn_head_*_all_pos``), ``heads_pos`` each head's output at one
position (layers · heads × positions), ``head`` one chosen head's output, q, k, v and pattern by
position (5 × positions). Each cell is one batch row of a hooked run that covers a few layers:
the tokens before the first difference read from a KV cache, and a cell's row joining the batch
at its own layer as a copy of the unpatched run (row 0), so no block runs for a row it cannot
change; the runs cover 1, 2, 4, … layers (at most RUN_ROWS cells), the first grid rows coming
soon and the later ones in wide products. ``core.interp.attribution`` gives the one-pass
approximation.
Layers and heads are 0-based in code, 1-based in labels.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from core.decoder.adapter import adapter_of
from core.decoder.run import hooked_run, prefix
from core.interp.patching_cells import Cells, by_site, run_sites
from core.interp.prediction import context_limit
from core.interp.ranking import AnswerToken, answer_pair
from core.interp.token_text import visible
from core.models.kinds import DECODER, check_kind

WHATS = ("resid", "attn", "mlp", "heads", "q", "k", "v", "pattern", "heads_pos", "head")
DIRECTIONS = ("denoise", "noise")
HEAD_PARTS = ("output", "query", "key", "value", "pattern")  # the rows of the "head" grid
HEAD_PART_SITES = ("z", "q", "k", "v", "pattern")
RUN_ROWS = 128  # the most cells one patched run takes
Progress = Callable[[int, int], None]
PAIRS = {  # name: (clean, corrupted, target, foil), pairs that teach
    "Names (IOI)": (
        "When Mary and John went to the store, John gave a drink to",
        "When Mary and John went to the store, Mary gave a drink to",
        "Mary",
        "John",
    ),
    "A fact": ("The Eiffel Tower is in the city of", "The Colosseum is in the city of", "Paris", "Rome"),
    "A repeated sequence": (
        "red fish blue bird green tree red fish blue bird green",
        "red fish blue bird green cake red fish blue bird green",
        "tree",
        "cake",
    ),
}


@dataclass(frozen=True)
class PatchPair:
    """A clean and a corrupted prompt of the same length, and the answer they are judged by."""

    clean: tuple[int, ...]  # (T,) token ids
    corrupt: tuple[int, ...]  # (T,)
    clean_pieces: tuple[str, ...]
    corrupt_pieces: tuple[str, ...]
    target: AnswerToken
    foil: AnswerToken
    differ: tuple[int, ...]  # positions where the two prompts differ

    @property
    def length(self) -> int:
        return len(self.clean)


def _split(pieces: tuple[str, ...]) -> str:
    return "|".join(visible(p) for p in pieces)


def prepare(model: Any, clean: str, corrupt: str, target: str, foil: str) -> PatchPair:
    """The pair as ``model`` (a core.models.LoadedModel) reads it; ValueError saying what to
    change for an encoder, an empty, too long or identical prompt, prompts of different token
    counts, or a target equal to the foil."""
    check_kind(model.name, model.kind, DECODER)
    tok = model.tokenizer
    ids, pieces = {}, {}
    for name, text in (("clean", clean), ("corrupted", corrupt)):
        if not (text or "").strip():
            raise ValueError(f"Type a {name} prompt first.")
        ids[name] = tuple(tok(text, add_special_tokens=True)["input_ids"])
        pieces[name] = tuple(tok.decode([i]) for i in ids[name])
        if len(ids[name]) > context_limit(model):
            raise ValueError(
                f"The {name} prompt is {len(ids[name])} tokens; {model.name} reads at most "
                f"{context_limit(model)} here. Shorten it."
            )
    a, b = ids["clean"], ids["corrupted"]
    if len(a) != len(b):
        first = next((i for i, (x, y) in enumerate(zip(a, b, strict=False)) if x != y), min(len(a), len(b)))
        raise ValueError(
            f"The prompts split into different numbers of tokens: clean {len(a)} "
            f"({_split(pieces['clean'])}), corrupted {len(b)} ({_split(pieces['corrupted'])}); they "
            f"first differ at token {first + 1}. Change the corrupted prompt so that each swapped "
            "word is as many tokens as the one it replaces (e.g. another one-token name)."
        )
    differ = tuple(i for i, (x, y) in enumerate(zip(a, b, strict=True)) if x != y)
    if not differ:
        raise ValueError(
            "The two prompts are the same tokens, so there is nothing to patch (the metric's two "
            "ends would be equal). Change a word of the corrupted prompt."
        )
    return PatchPair(
        a, b, pieces["clean"], pieces["corrupted"], *answer_pair(tok, target, foil, clean), differ
    )


@dataclass(frozen=True)
class Grid:
    """One patching sweep: the metric of each patched run, ``nan`` where not run yet."""

    what: str
    direction: str
    rows: tuple[str, ...]
    columns: tuple[str, ...]
    raw: np.ndarray  # (rows, columns) logit(target) − logit(foil) of each patched run
    clean: float  # the metric of the clean run
    corrupt: float  # of the corrupted run
    approx: bool = False  # attribution patching's estimate rather than patched runs
    head: tuple[int, int] | None = None  # the chosen head of a "head" grid

    @property
    def values(self) -> np.ndarray:
        """(rows, columns): 0 = the corrupted run's metric, 1 = the clean run's."""
        return (self.raw - self.corrupt) / (self.clean - self.corrupt)


def labels(pair: PatchPair, shape: Any, what: str) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """Row and column labels of a ``what`` grid (layers and heads from 1; positions with tokens)."""
    layers = tuple(f"layer {i + 1}" for i in range(shape.layers))
    positions = tuple(
        f"{i + 1} {visible(a)}" if a == b else f"{i + 1} {visible(a)}/{visible(b)}"
        for i, (a, b) in enumerate(zip(pair.clean_pieces, pair.corrupt_pieces, strict=True))
    )
    heads = tuple(f"H{h + 1}" for h in range(shape.heads))
    if what == "resid":
        return ("embeddings", *layers), positions
    if what in ("attn", "mlp"):
        return layers, positions
    if what == "heads_pos":
        return tuple(f"L{i + 1} H{h + 1}" for i in range(shape.layers) for h in range(shape.heads)), positions
    if what == "head":
        return HEAD_PARTS, positions
    return layers, heads


def metric_of(adapter: Any, pair: PatchPair) -> Callable[[Any], Any]:
    """(batch, hidden) final-normed last hidden states -> (batch,) logit(target) − logit(foil)."""

    def metric(hidden: Any) -> Any:
        logits = adapter.token_logits(hidden, [pair.target.id, pair.foil.id])
        return logits[:, 0] - logits[:, 1]

    return metric


def check_direction(direction: str) -> None:
    if direction not in DIRECTIONS:
        raise ValueError(f"Unknown direction '{direction}'; choose {' or '.join(DIRECTIONS)}.")


def record(model: Any, ids: tuple[int, ...], metric: Callable) -> tuple[dict, float]:
    """One unpatched run of ``ids``: every site's activations (``patching_cells.by_site``) and the metric."""
    import torch

    layers = model.n_layers
    out = hooked_run(model, ids, cache=run_sites(layers), unembed=False)
    with torch.inference_mode():
        value = float(metric(out.normed[:, -1].float())[0])
    return by_site(out.cache, layers), value


def _batches(what: str, shape: Any, length: int, head: tuple[int, int] | None) -> list[tuple[Cells, Any]]:
    """Every batch a ``what`` grid needs, each with the (rows, columns) index of its cells."""
    import torch

    t, h = torch.arange(length), torch.arange(shape.heads)
    out = []
    if what in ("resid", "attn", "mlp"):
        layers = range(shape.layers + (what == "resid"))
        for layer in layers:
            out.append((Cells(what, layer, None, t, length), (np.full(length, layer), t.numpy())))
    elif what in ("heads", "q", "k", "v", "pattern"):
        site = "z" if what == "heads" else what
        for layer in range(shape.layers):
            out.append((Cells(site, layer, h, None, shape.heads), (np.full(shape.heads, layer), h.numpy())))
    elif what == "heads_pos":
        heads, positions = h.repeat_interleave(length), t.repeat(shape.heads)
        for layer in range(shape.layers):
            cells = Cells("z", layer, heads, positions, len(heads))
            out.append((cells, ((layer * shape.heads + heads).numpy(), positions.numpy())))
    elif what == "head":
        layer, one = check_head(shape, head)
        for row, site in enumerate(HEAD_PART_SITES):
            out.append(
                (Cells(site, layer, torch.full((length,), one), t, length), (np.full(length, row), t.numpy()))
            )
    else:
        raise ValueError(f"Unknown patch '{what}'; choose one of {', '.join(WHATS)}.")
    return out


def check_head(shape: Any, head: tuple[int, int] | None) -> tuple[int, int]:
    """``head`` (layer, head), 0-based; ValueError when missing or out of range."""
    if head is None:
        raise ValueError("Choose a head first (layer and head).")
    layer, one = head
    if not (0 <= layer < shape.layers and 0 <= one < shape.heads):
        raise ValueError(
            f"There is no layer {layer + 1}, head {one + 1}: this model has {shape.layers} × {shape.heads}."
        )
    return int(layer), int(one)


def ends(model: Any, pair: PatchPair) -> tuple[dict, float, dict, float]:
    """Both unpatched runs: (clean activations, clean metric, corrupted ones, corrupted metric);
    ValueError when the metric is the same in both (nothing to normalise by)."""
    metric = metric_of(adapter_of(model.module), pair)
    clean, m_clean = record(model, pair.clean, metric)
    corrupt, m_corrupt = record(model, pair.corrupt, metric)
    check_ends(m_clean, m_corrupt)
    return clean, m_clean, corrupt, m_corrupt


def check_ends(m_clean: float, m_corrupt: float) -> None:
    """ValueError when both runs give the same metric: normalising would divide by zero."""
    if abs(m_clean - m_corrupt) < 1e-6:
        raise ValueError(
            f"Both prompts give the same logit difference ({m_clean:.4f}), so there is no answer to "
            "bring back; change the corrupted prompt so that it changes the answer."
        )


def patch(
    model: Any,
    pair: PatchPair,
    what: str,
    direction: str = "denoise",
    head: tuple[int, int] | None = None,
    progress: Progress | None = None,
    partial: Callable[[Grid], None] | None = None,
) -> Grid:
    """The ``what`` grid of ``model`` (a LoadedModel), one patched run per cell, in ``direction``.

    ``progress(done, total)`` (cells) is called before the first batch, after each and at each
    block of every run; raising from it cancels and leaves the model clean. ``partial(grid)``
    gets the grid so far after each batch (cells to come are nan).
    """
    import torch

    check_direction(direction)
    adapter = adapter_of(model.module)
    shape = adapter.shape
    batches = _batches(what, shape, pair.length, head)
    clean, m_clean, corrupt, m_corrupt = ends(model, pair)
    source, receiving = (clean, corrupt) if direction == "denoise" else (corrupt, clean)
    ids = pair.corrupt if direction == "denoise" else pair.clean
    rows, columns = labels(pair, shape, what)
    raw = np.full((len(rows), len(columns)), np.nan)
    total, done = int(sum(c.rows for c, _ in batches)), 0
    tick = progress or (lambda done, total: None)
    metric = metric_of(adapter, pair)
    grid = Grid(
        what, direction, rows, columns, raw, m_clean, m_corrupt, head=head if what == "head" else None
    )
    tick(0, total)
    unchanged = m_corrupt if direction == "denoise" else m_clean
    groups = shape.heads // shape.kv_heads
    first = pair.differ[0]  # every run reads the tokens before it from one cache
    past = prefix(model, ids[:first]) if first else None
    for run in _runs(batches):
        todo = []
        for cells, where in run:
            live = cells.changed(source, receiving, groups)
            raw[where] = unchanged  # a copy of equal values reruns the receiving run
            if live.any():
                todo.append((replace(cells.only(live), offset=first), tuple(w[live.numpy()] for w in where)))
        if todo:
            stages, edits, starts = _joining(todo, source, receiving, groups, shape.layers)
            with torch.inference_mode(), _ticking(adapter, tick, done, total):
                out = hooked_run(
                    model, ids[first:], edits=edits, unembed=False, fan_out=stages, past=past
                )  # fmt: skip
                values = metric(out.normed[:, -1].float()).numpy()
            for (cells, where), start in zip(todo, starts, strict=True):
                raw[where] = values[start : start + cells.rows]
        done += sum(cells.rows for cells, _ in run)
        tick(done, total)
        if partial is not None:
            partial(_copy(grid, raw))
    return _copy(grid, raw)


def _runs(batches: list) -> list[list]:
    """``batches`` in runs of 1, 2, 4, … (at most RUN_ROWS cells each, and at least one batch)."""
    runs, at, size = [], 0, 1
    while at < len(batches):
        run, rows = [batches[at]], batches[at][0].rows
        while len(run) < size and at + len(run) < len(batches):
            rows += batches[at + len(run)][0].rows
            if rows > RUN_ROWS:
                break
            run.append(batches[at + len(run)])
        runs.append(run)
        at, size = at + len(run), size * 2
    return runs


def _joining(todo: list, source: dict, receiving: dict, groups: int, layers: int) -> tuple[list, list, list]:
    """One run's fan-out stages, edits and each batch's first row: row 0 is the unpatched run,
    and each batch's rows join at its layer (the batches come in the order of their layers)."""
    import torch

    rows, starts, grows, placed = 1, [], {}, []
    for cells, _ in todo:
        block = min(cells.layer, layers - 1)  # the stream leaving the last block joins at it
        starts.append(rows)
        rows += cells.rows
        grows[block] = rows
        placed.append((block, cells.edits(source, receiving, groups)))
    edits = []
    for (block, made), start in zip(placed, starts, strict=True):
        for edit in made:  # each mask widened to the batch at its layer, its rows where they join
            where = torch.zeros((grows[block], *edit.where.shape[1:]), dtype=torch.bool)
            where[start : start + len(edit.where)] = edit.where
            edits.append(replace(edit, where=where))
    return sorted(grows.items()), edits, starts


def _copy(grid: Grid, raw: np.ndarray) -> Grid:
    return replace(grid, raw=raw.copy())


def _ticking(adapter: Any, tick: Progress, done: int, total: int):
    """Calls ``tick(done, total)`` on entering each block, so a cancel lands within one block."""
    from core.decoder.hooks import entering

    return entering(adapter.blocks, lambda *_: tick(done, total))


def cell_logits(
    model: Any,
    pair: PatchPair,
    what: str,
    cell: tuple[int, int],
    direction: str = "denoise",
    head: tuple[int, int] | None = None,
) -> np.ndarray:
    """(vocab,) next-token logits of the one patched run at ``cell`` (row, column) of a ``what`` grid."""
    import torch

    check_direction(direction)
    shape = adapter_of(model.module).shape
    clean, _, corrupt, _ = ends(model, pair)
    source, receiving = (clean, corrupt) if direction == "denoise" else (corrupt, clean)
    ids = pair.corrupt if direction == "denoise" else pair.clean
    for cells, (rows, columns) in _batches(what, shape, pair.length, head):
        hit = torch.from_numpy((rows == cell[0]) & (np.asarray(columns) == cell[1]))
        if hit.any():
            edits = cells.only(hit).edits(source, receiving, shape.heads // shape.kv_heads)
            return hooked_run(model, ids, edits=edits).logits[0, -1].float().numpy()
    raise ValueError(f"There is no cell {cell} in a {what} grid.")
