"""Activation and attribution patching on tiny random decoders (Llama with grouped-query attention,
and GPT-2), checked against hooks written here by hand on each family's own module names."""

from types import SimpleNamespace

import numpy as np
import pytest

from core.decoder.hooks import Tap, tapped
from core.interp import patching
from core.interp.attribution import attribute
from core.interp.patching import WHATS, cell_logits, patch, prepare
from tests.tiny_models import FAMILY_TYPES, save_tiny_decoder

pytestmark = pytest.mark.models
torch = pytest.importorskip("torch")

CLEAN = "the cat sat on the mat because the cat"  # 14 pieces
CORRUPT = "the cat sat in the mat because the cat"  # " on" → " in": position 7 (index 6) only
CHANGED = 6
BLOCKS = {"llama": lambda m: m.model.layers, "gpt2": lambda m: m.transformer.h}  # by hand
PARTS = {"llama": ("self_attn", "mlp"), "gpt2": ("attn", "mlp")}


@pytest.fixture(scope="module", params=("llama", "gpt2"))
def tiny(request, tmp_path_factory):
    from core.models import load_model

    folder = save_tiny_decoder(tmp_path_factory.mktemp(request.param), request.param)
    model = load_model(str(folder))
    pair = prepare(model, CLEAN, CORRUPT, "the", "because")
    return SimpleNamespace(kind=request.param, model=model, module=model.module, pair=pair)


class Keep(Tap):
    """Keeps q, k, v, z and the weights of batch row 0 of every layer (written for the tests)."""

    def __init__(self):
        self.seen = {}

    def qkv(self, layer, q, k, v):
        self.seen[layer, "q"], self.seen[layer, "k"], self.seen[layer, "v"] = q[0], k[0], v[0]
        return q, k, v

    def heads(self, layer, z, weights, value):
        self.seen[layer, "z"], self.seen[layer, "pattern"] = z[0], weights[0]
        return z


def run_of(t, text, hooks=(), tap=None):
    """The metric logit(the) − logit(because) at the last position, and what a Keep tap saw,
    with forward hooks ``hooks`` ((module, hook, pre)) installed."""
    ids = torch.tensor([t.model.tokenizer(text)["input_ids"]])
    keep = Keep()
    handles = [m.register_forward_pre_hook(h) if pre else m.register_forward_hook(h) for m, h, pre in hooks]
    try:
        with torch.no_grad(), tapped(keep, *([tap] if tap else [])):
            logits = t.module(input_ids=ids, use_cache=False).logits[0, -1].double()
    finally:
        for h in handles:
            h.remove()
    return float(logits[t.pair.target.id] - logits[t.pair.foil.id]), keep.seen


def outputs(t, text):
    """Each block's input and output, each attention's and MLP's output, of one run: (T, hidden)."""
    seen = {}
    blocks = BLOCKS[t.kind](t.module)

    def keep(key):
        return lambda _, __, out: seen.__setitem__(
            key, (out[0] if isinstance(out, tuple) else out)[0].clone()
        )

    hooks = [(b, keep_input(seen, i, clone=True), True) for i, b in enumerate(blocks)]
    hooks += [(getattr(b, PARTS[t.kind][0]), keep(("attn", i)), False) for i, b in enumerate(blocks)]
    hooks += [(b.mlp, keep(("mlp", i)), False) for i, b in enumerate(blocks)]
    run_of(t, text, hooks)
    return seen


def keep_input(seen, layer, clone=False):
    def hook(_, args):
        seen["in", layer] = args[0][0].clone() if clone else args[0]

    return hook


def keep_output(seen, key, layer):
    def hook(_, __, out):
        seen[key, layer] = out[0] if isinstance(out, tuple) else out

    return hook


def replace_at(key, pos, source, pre):
    """A hook that puts ``source[key]`` at ``pos`` into a block's input (``pre``) or a part's output."""

    def put(x):
        x = x.clone()
        x[0, pos] = source[key][pos]
        return x

    if pre:
        return lambda _, args: (put(args[0]), *args[1:])
    return lambda _, __, out: (put(out[0]), *out[1:]) if isinstance(out, tuple) else put(out)


@pytest.mark.parametrize("direction", ["denoise", "noise"])
def test_stream_attention_and_mlp_cells_equal_hand_written_copies(tiny, direction):
    receive, give = (CORRUPT, CLEAN) if direction == "denoise" else (CLEAN, CORRUPT)
    source = outputs(tiny, give)
    blocks = BLOCKS[tiny.kind](tiny.module)
    grids = {what: patch(tiny.model, tiny.pair, what, direction) for what in ("resid", "attn", "mlp")}
    for layer, pos in ((0, CHANGED), (1, 3), (1, 13)):
        block = blocks[layer]
        cases = {
            "resid": (block, replace_at(("in", layer), pos, source, True), True),
            "attn": (
                getattr(block, PARTS[tiny.kind][0]),
                replace_at(("attn", layer), pos, source, False),
                False,
            ),
            "mlp": (block.mlp, replace_at(("mlp", layer), pos, source, False), False),
        }
        for what, hook in cases.items():
            by_hand, _ = run_of(tiny, receive, [hook])
            assert grids[what].raw[layer, pos] == pytest.approx(by_hand, abs=1e-5), (what, layer, pos)


class CopyHead(Tap):
    """Copies one head's q, k, v, pattern or output (every position) from ``source`` (a Keep's
    ``seen``) in a batch of one; keys and values shared with other query heads are copied for
    this head alone by giving the others back their output from ``receiving``."""

    def __init__(self, site, layer, head, groups, source, receiving, scale=1.0):
        self.site, self.layer, self.head, self.groups = site, layer, head, groups
        self.source, self.receiving, self.scale = source, receiving, scale

    def qkv(self, layer, q, k, v):
        if layer != self.layer or self.site not in "qkv":
            return q, k, v
        parts = {"q": q.clone(), "k": k.clone(), "v": v.clone()}
        i = self.head if self.site == "q" else self.head // self.groups
        x = parts[self.site]
        x[0, i] = x[0, i] + self.scale * (self.source[layer, self.site][i] - x[0, i])
        return parts["q"], parts["k"], parts["v"]

    def heads(self, layer, z, weights, value):
        if layer != self.layer:
            return z
        z = z.clone()
        if self.site == "z":
            z[0, :, self.head] += self.scale * (self.source[layer, "z"][:, self.head] - z[0, :, self.head])
        if self.site == "pattern":
            w = weights[0, self.head] + self.scale * (
                self.source[layer, "pattern"][self.head] - weights[0, self.head]
            )
            z[0, :, self.head] = w @ value[0, self.head // self.groups]
        if self.site in "kv":
            for other in range(z.shape[2]):
                if other != self.head and other // self.groups == self.head // self.groups:
                    z[0, :, other] = self.receiving[layer, "z"][:, other]
        return z


def groups_of(t):
    c = t.module.config
    return c.num_attention_heads // (getattr(c, "num_key_value_heads", None) or c.num_attention_heads)


@pytest.mark.parametrize("direction", ["denoise", "noise"])
def test_head_cells_equal_hand_written_copies(tiny, direction):
    receive, give = (CORRUPT, CLEAN) if direction == "denoise" else (CLEAN, CORRUPT)
    _, source = run_of(tiny, give)
    _, receiving = run_of(tiny, receive)
    heads = tiny.module.config.num_attention_heads
    for what, site in (("heads", "z"), ("q", "q"), ("k", "k"), ("v", "v"), ("pattern", "pattern")):
        grid = patch(tiny.model, tiny.pair, what, direction)
        for layer, head in ((0, 1), (1, heads - 1)):
            tap = CopyHead(site, layer, head, groups_of(tiny), source, receiving)
            by_hand, _ = run_of(tiny, receive, tap=tap)
            assert grid.raw[layer, head] == pytest.approx(by_hand, abs=1e-5), (what, layer, head)


@pytest.mark.parametrize("one_run", [False, True])
@pytest.mark.parametrize("what", WHATS)
def test_every_cell_equals_its_run_alone(tiny, what, one_run, monkeypatch):
    """A patched run covers several layers, each cell's row joining the batch at its own layer:
    every cell equals the one patched run of that cell alone (cell_logits: no fan-out, no cache),
    with the runs as built and with every layer in one run."""
    if one_run:
        monkeypatch.setattr(patching, "_runs", lambda batches: [batches])
    head = (1, 0) if what == "head" else None
    grid = patch(tiny.model, tiny.pair, what, head=head)
    target, foil = tiny.pair.target.id, tiny.pair.foil.id
    for cell in np.ndindex(grid.raw.shape):
        logits = cell_logits(tiny.model, tiny.pair, what, cell, head=head)
        assert grid.raw[cell] == pytest.approx(logits[target] - logits[foil], abs=1e-5), cell


def test_one_changed_position(tiny):
    """Copying the clean embeddings at the one changed position gives the clean run; anywhere else
    the corrupted one; the stream leaving the last block matters only at the last position. In
    raw metrics, to float32 rounding (normalised values divide it by the metrics' gap)."""
    grid = patch(tiny.model, tiny.pair, "resid")
    clean, corrupt, raw = grid.clean, grid.corrupt, grid.raw
    assert tiny.pair.differ == (CHANGED,)
    assert raw[0, CHANGED] == pytest.approx(clean, abs=1e-5)
    assert np.abs(np.delete(raw[0], CHANGED) - corrupt).max() < 1e-5
    assert raw[-1, -1] == pytest.approx(clean, abs=1e-5)
    assert np.abs(raw[-1, :-1] - corrupt).max() < 1e-5
    noise = patch(tiny.model, tiny.pair, "resid", "noise").raw
    assert noise[0, CHANGED] == pytest.approx(corrupt, abs=1e-5)
    assert np.abs(np.delete(noise[0], CHANGED) - clean).max() < 1e-5
    assert noise[-1, -1] == pytest.approx(corrupt, abs=1e-5)


def test_head_by_position_rows_sum_to_their_grids_at_the_last_layer(tiny):
    """At the last layer only the last position reaches the answer: a head's output and pattern
    patched at the last position equal patching them at every position."""
    last = tiny.module.config.num_hidden_layers - 1
    by_pos = patch(tiny.model, tiny.pair, "head", head=(last, 0)).raw
    assert by_pos[0, -1] == pytest.approx(patch(tiny.model, tiny.pair, "heads").raw[last, 0], abs=1e-5)
    assert by_pos[4, -1] == pytest.approx(patch(tiny.model, tiny.pair, "pattern").raw[last, 0], abs=1e-5)


def test_progress_cancels_and_partial_grids_fill_in(tiny):
    seen, partial = [], []

    def tick(done, total):
        seen.append((done, total))
        if done >= total // 2:
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        patch(tiny.model, tiny.pair, "resid", progress=tick, partial=partial.append)
    assert seen[0][0] == 0 and len(partial) >= 1
    assert np.isnan(partial[-1].raw).any() and not np.isnan(partial[-1].raw[0]).any()
    assert patch(tiny.model, tiny.pair, "resid").raw[0, 0] == pytest.approx(
        partial[0].raw[0, 0]
    )  # clean again


class Graph(Tap):
    """Keeps q, z and the weights of every layer with their graph (written for the tests)."""

    def __init__(self):
        self.seen = {}

    def qkv(self, layer, q, k, v):
        self.seen[layer, "q"] = q
        return q, k, v

    def heads(self, layer, z, weights, value):
        self.seen[layer, "z"], self.seen[layer, "pattern"] = z, weights
        return z


@pytest.mark.parametrize("direction", ["denoise", "noise"])
def test_attribution_equals_the_gradient_formula(tiny, direction):
    receive, give = (CORRUPT, CLEAN) if direction == "denoise" else (CLEAN, CORRUPT)
    approx = attribute(tiny.model, tiny.pair, direction).by_position
    source, (_, source_heads) = outputs(tiny, give), run_of(tiny, give)
    blocks = BLOCKS[tiny.kind](tiny.module)
    kept, graph = {}, Graph()
    hooks = [b.register_forward_pre_hook(keep_input(kept, i)) for i, b in enumerate(blocks)]
    for name, key in ((PARTS[tiny.kind][0], "attn"), ("mlp", "mlp")):
        hooks += [
            getattr(b, name).register_forward_hook(keep_output(kept, key, i)) for i, b in enumerate(blocks)
        ]
    ids = torch.tensor([tiny.model.tokenizer(receive)["input_ids"]])
    try:
        with tapped(graph):
            logits = tiny.module(input_ids=ids, use_cache=False).logits[0, -1]
    finally:
        for h in hooks:
            h.remove()
    metric = logits[tiny.pair.target.id] - logits[tiny.pair.foil.id]
    names = [*kept, *graph.seen]
    tensors = [kept[k] for k in kept] + [graph.seen[k] for k in graph.seen]
    grads = dict(zip(names, torch.autograd.grad(metric, tensors), strict=True))
    for layer in range(len(blocks)):
        for key, site in ((("in", layer), "resid"), (("attn", layer), "attn"), (("mlp", layer), "mlp")):
            expected = ((source[key] - kept[key][0].detach()) * grads[key][0]).sum(-1)
            np.testing.assert_allclose(approx[site][layer], expected.numpy(), atol=1e-5, rtol=1e-4)
        for site in ("q", "z", "pattern"):
            change = (source_heads[layer, site] - graph.seen[layer, site][0].detach()) * grads[layer, site][0]
            expected = change.sum(-1).T if site == "z" else change.sum(-1)
            np.testing.assert_allclose(approx[site][layer], expected.numpy(), atol=1e-5, rtol=1e-4)


@pytest.mark.parametrize("site", ["k", "v"])
def test_key_and_value_attribution_is_the_derivative_of_one_heads_copy(tiny, site):
    """The slope of the metric along (source − receiving) of one query head's keys or values,
    by central differences in float64, equals attribution's estimate for that head."""
    approx = attribute(tiny.model, tiny.pair).by_position[site].sum(-1)
    tiny.module.double()
    try:
        _, source = run_of(tiny, CLEAN)
        _, receiving = run_of(tiny, CORRUPT)
        step = 1e-3
        for layer, head in ((0, 0), (1, 1)):
            taps = [CopyHead(site, layer, head, groups_of(tiny), source, receiving, s) for s in (step, -step)]
            ends = [run_of(tiny, CORRUPT, tap=tap)[0] for tap in taps]
            slope = (ends[0] - ends[1]) / (2 * step)
            assert approx[layer, head] == pytest.approx(slope, abs=2e-3, rel=2e-3), (layer, head)
    finally:
        tiny.module.float()


def test_bad_pairs_are_refused_with_what_to_change(tiny):
    model = tiny.model
    with pytest.raises(ValueError, match=r"different numbers of tokens.*clean 14 .*corrupted 15 .*token 8"):
        prepare(model, CLEAN, "the cat sat on a mat because the cat", "the", "because")
    with pytest.raises(ValueError, match="same tokens"):
        prepare(model, CLEAN, CLEAN, "the", "because")
    with pytest.raises(ValueError, match="same token"):
        prepare(model, CLEAN, CORRUPT, "the", " the")
    with pytest.raises(ValueError, match="at most"):
        prepare(model, CLEAN * 20, CORRUPT * 20, "the", "because")
    with pytest.raises(ValueError, match="encoder"):
        prepare(SimpleNamespace(name="MiniLM", kind="encoder"), CLEAN, CORRUPT, "the", "because")
    with pytest.raises(
        ValueError, match=r"^Target: ' sat' is \d tokens here \(.*\), not one: type one token"
    ):
        prepare(model, CLEAN, CORRUPT, "sat", "because")
    with pytest.raises(ValueError, match="Unknown patch"):
        patch(tiny.model, tiny.pair, "everything")
    with pytest.raises(ValueError, match="no layer 9"):
        patch(tiny.model, tiny.pair, "head", head=(8, 0))


@pytest.mark.parametrize("model_type", FAMILY_TYPES)
def test_every_family_patches_with_exact_ends(model_type, tmp_path):
    """Each family runs every grid through its own attention and cache: the ends are exact,
    every cell is finite, and so is the approximation."""
    from core.models import load_model

    model = load_model(str(save_tiny_decoder(tmp_path / model_type, model_type)))
    pair = prepare(model, CLEAN, CORRUPT, "the", "because")
    resid = patch(model, pair, "resid").values
    assert resid[0, CHANGED] == pytest.approx(1, abs=1e-4) and resid[-1, -1] == pytest.approx(1, abs=1e-4)
    for what in ("heads", "k", "pattern"):
        assert np.isfinite(patch(model, pair, what, "noise").raw).all(), what
    assert np.isfinite(attribute(model, pair).grid("heads_pos").raw).all()
