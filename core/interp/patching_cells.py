"""What activation patching copies, and the edits of one hooked run that copy it into chosen batch
rows. Used by ``core.interp.patching`` and ``core.interp.attribution``.

Sites (what can be copied), per layer l, shapes of one run (T tokens), as ``by_site`` keys a
hooked run's cache (``core.decoder.run``):

    resid    the residual stream entering block l (l = layers: leaving the last block)  (T, hidden)
    attn     the attention module's output, after the output projection              (T, hidden)
    mlp      the MLP's output                                                        (T, hidden)
    z        each head's output before the output projection                         (T, heads, d)
    q        queries after rotary                                                    (heads, T, d)
    k, v     keys after rotary, values                                           (kv_heads, T, d)
    pattern  each head's attention weights                                           (heads, T, T)

A patched batch runs one site of one layer: row i gets the source run's activation of head
``heads[i]`` (where the site has heads) at position ``positions[i]`` (or at every position).
torch is imported by the callers.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from core.decoder.run import Edit

RUN_SITES = {"resid": "resid_pre", "attn": "attn_out", "mlp": "mlp_out"}  # the others keep their names
SITES = ("resid", "attn", "mlp", "z", "q", "k", "v", "pattern")
PER_HEAD = ("z", "q", "k", "v")  # (batch, T, heads, d); a pattern is (batch, heads, T, T)


def run_sites(layers: int) -> list:
    """What a hooked run keeps for ``by_site``: every site of every layer, and the stream leaving
    the last block."""
    return [RUN_SITES.get(site, site) for site in SITES] + [("resid_post", layers - 1)]


def by_site(found: dict, layers: int) -> dict[str, dict[int, Any]]:
    """A hooked run's tensors keyed (run site, layer) as ``acts[site][layer]``; the stream leaving
    the last block is ``acts["resid"][layers]``."""
    names = {run: site for site, run in RUN_SITES.items()}
    acts: dict[str, dict[int, Any]] = {}
    for (site, layer), tensor in found.items():
        if site == "resid_post":
            acts.setdefault("resid", {})[layers] = tensor
        else:
            acts.setdefault(names.get(site, site), {})[layer] = tensor
    return acts


@dataclass(frozen=True)
class Cells:
    """One patched batch: ``site`` of ``layer``; per row the head and position copied (None: all)."""

    site: str
    layer: int
    heads: Any = None  # (B,) int64 torch, or None for the sites without heads
    positions: Any = None  # (B,) int64 torch, or None: every position
    rows: int = 1
    offset: int = 0  # tokens before the run, read from a cache: positions count from there

    def changed(self, source: dict, receiving: dict, groups: int) -> Any:
        """(B,) bool: the rows whose copy changes anything (the others would rerun the receiving
        run: e.g. every position before the first token where the prompts differ)."""
        import torch

        a, b = source[self.site][self.layer][0], receiving[self.site][self.layer][0]
        if self.site in PER_HEAD:  # (T, heads, d) -> (heads, T, d)
            a, b = a.transpose(0, 1), b.transpose(0, 1)
        out = []
        for i in range(self.rows):
            where = (
                () if self.heads is None else (int(self.heads[i]) // (groups if self.site in "kv" else 1),)
            )
            where += () if self.positions is None else (int(self.positions[i]),)
            out.append(not torch.equal(a[where], b[where]))
        return torch.tensor(out, dtype=torch.bool)

    def only(self, rows: Any) -> Cells:
        """These cells with only ``rows`` (a (B,) bool mask) left."""
        pick = lambda x: None if x is None else x[rows]  # noqa: E731
        return Cells(
            self.site, self.layer, pick(self.heads), pick(self.positions), int(rows.sum()), self.offset
        )

    def edits(self, source: dict, receiving: dict, groups: int) -> list[Edit]:
        """The edits of a hooked run (batch row i is cell i, after ``offset`` cached tokens) that
        copy the cells from ``source``; ``receiving`` is the run being patched, to undo what a
        shared key/value head changes in the other query heads of its group."""
        import torch

        site, layer, o = self.site, self.layer, self.offset
        layers = len(source["resid"]) - 1
        value = source[site][layer]
        if site == "pattern":  # (B, heads, queries, keys): the queries after the cache
            value = value[..., o:, :]
        elif site not in ("k", "v"):  # k and v cover the cached tokens too
            value = value[:, o:]
        rows = torch.arange(self.rows)
        if site in ("resid", "attn", "mlp"):  # (B, T', hidden)
            where = torch.zeros(self.rows, value.shape[1], 1, dtype=torch.bool)
            where[(rows,) if self.positions is None else (rows, self.positions - o)] = True
            name = "resid_post" if layer == layers else RUN_SITES[site]
            return [Edit(name, min(layer, layers - 1), "replace", value, where=where)]
        heads = self.heads // groups if site in ("k", "v") else self.heads
        where = torch.zeros(self.rows, value.shape[1], value.shape[2], 1, dtype=torch.bool)
        if site in PER_HEAD:  # (B, positions, heads, d)
            start = 0 if site in ("k", "v") else o
            every = slice(None) if self.positions is None else self.positions - start
            where[rows, every, heads] = True
        else:  # pattern: (B, heads, queries, keys)
            where[(rows, heads) if self.positions is None else (rows, heads, self.positions - o)] = True
        edits = [Edit(site, layer, "replace", value, where=where)]
        if site in ("k", "v") and groups > 1:  # only the chosen query head sees the copy
            query = torch.arange(value.shape[2] * groups)  # every query head
            shared = (query[None] // groups == heads[:, None]) & (query[None] != self.heads[:, None])
            edits.append(
                Edit("z", layer, "replace", receiving["z"][layer][:, o:], where=shared[:, None, :, None])
            )
        return edits
